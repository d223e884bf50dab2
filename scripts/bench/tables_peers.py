#!/usr/bin/env python3
"""The peers of scripts/bench/tables.lua: polars and DuckDB on the same CSV files, the same
cases, the same thread count, timed the same way (the wall time of the call with the data
loaded: best of `reps` after one warm-up). Prints one line per case: `case polars_ms duckdb_ms`
(nan where a peer is missing). Usage: tables_peers.py data.csv right.csv|- threads reps"""
import math
import os
import sys
import time
import warnings

warnings.filterwarnings("ignore")
path, right_path, threads, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
os.environ["POLARS_MAX_THREADS"] = str(threads)

CASES = ["filter_count", "sort_1", "sort_2", "sum_1", "mean_1", "median_1", "sum_2", "mean_2",
         "median_2", "value_counts", "join_left"]


def best(fn):
    fn()
    t = math.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t * 1e3


res = {c: {"polars": math.nan, "duckdb": math.nan} for c in CASES}

only = os.environ.get("GWB_BENCH_PEERS", "polars,duckdb").split(",")
try:
    if "polars" not in only:
        raise ImportError
    import polars as pl
    pl.enable_string_cache()
    cat = {"k1": pl.Categorical, "k2": pl.Categorical}
    df = pl.read_csv(path, schema_overrides=cat)
    r = pl.read_csv(right_path, schema_overrides={"k1": pl.Categorical}) if right_path != "-" else None
    P = {
        "filter_count": lambda: df.filter((pl.col("v1") > 500) & (pl.col("k2") == "c3")).height,
        "sort_1": lambda: df.sort("v2"),
        "sort_2": lambda: df.sort(["k1", "v2"]),
        "sum_1": lambda: df.group_by("k1").agg(pl.col("v1").sum()),
        "mean_1": lambda: df.group_by("k1").agg(pl.col("v2").mean()),
        "median_1": lambda: df.group_by("k1").agg(pl.col("v3").median()),
        "sum_2": lambda: df.group_by(["k1", "k2"]).agg(pl.col("v1").sum()),
        "mean_2": lambda: df.group_by(["k1", "k2"]).agg(pl.col("v2").mean()),
        "median_2": lambda: df.group_by(["k1", "k2"]).agg(pl.col("v3").median()),
        "value_counts": lambda: df["k1"].value_counts(sort=True),
        "join_left": (lambda: df.join(r, on="k1", how="left")) if r is not None else None,
    }
    for c, fn in P.items():
        if fn:
            res[c]["polars"] = best(fn)
    del df, r
except ImportError:
    pass
except Exception as e:   # keep what was measured; say what failed
    print("polars failed:", repr(e), file=sys.stderr)

try:
    if "duckdb" not in only:
        raise ImportError
    import duckdb
    con = duckdb.connect()
    con.execute("SET threads = %d" % threads)
    con.execute("CREATE TABLE t AS SELECT * FROM read_csv_auto('%s')" % path)
    def fetch(q):
        """the result materialized as Arrow (the method's name moved between versions)"""
        r = con.execute(q)
        for m in ("to_arrow_table", "fetch_arrow_table", "arrow"):
            if hasattr(r, m):
                return getattr(r, m)()
        return r.fetchall()

    if right_path != "-":
        con.execute("CREATE TABLE r AS SELECT * FROM read_csv_auto('%s')" % right_path)
    Q = {
        "filter_count": "SELECT count(*) FROM t WHERE v1 > 500 AND k2 = 'c3'",
        "sort_1": "SELECT * FROM t ORDER BY v2",
        "sort_2": "SELECT * FROM t ORDER BY k1, v2",
        "sum_1": "SELECT k1, sum(v1) FROM t GROUP BY k1",
        "mean_1": "SELECT k1, avg(v2) FROM t GROUP BY k1",
        "median_1": "SELECT k1, median(v3) FROM t GROUP BY k1",
        "sum_2": "SELECT k1, k2, sum(v1) FROM t GROUP BY k1, k2",
        "mean_2": "SELECT k1, k2, avg(v2) FROM t GROUP BY k1, k2",
        "median_2": "SELECT k1, k2, median(v3) FROM t GROUP BY k1, k2",
        "value_counts": "SELECT k1, count(*) AS n FROM t GROUP BY k1 ORDER BY n DESC",
        "join_left": "SELECT * FROM t LEFT JOIN r USING (k1)" if right_path != "-" else None,
    }
    for c, q in Q.items():
        if q:
            res[c]["duckdb"] = best(lambda: fetch(q))
except ImportError:
    pass
except Exception as e:
    print("duckdb failed:", repr(e), file=sys.stderr)

for c in CASES:
    print(c, "%.1f" % res[c]["polars"], "%.1f" % res[c]["duckdb"])
