-- test_options.lua - integer options given a fractional, NaN or huge number raise an error that
-- names the option, the value and the rule (every integer option goes through gwb_opt_int).

local d = data.synth { rows = 60, features = 4, seed = 1 }
local A = mat.laplacian1d(12)                    -- dense
local L = mat.laplacian1d(50, { sparse = true })  -- sparse

-- {label, function(opts) ... end, option name}
local cases = {
  { "rf.train", function(o) return rf.train(d, o) end,
    { "trees", "depth", "bins", "min_leaf", "min_split", "seed", "threads", "block",
      "quantile_sample" } },
  { "rf.cv", function(o) return rf.cv(d, o) end, { "folds", "trees" } },
  { "data.synth", function(o) o.rows = o.rows or 20; return data.synth(o) end,
    { "rows", "features", "informative", "redundant", "repeated", "classes",
      "clusters_per_class", "seed", "threads" } },
  { "data.load", function(o) return data.load("datasets/iris.csv", o) end, { "threads" } },
  { "shuffle", function(o) return d:shuffle(o) end, { "seed" } },
  { "write_csv", function(o) return d:write_csv(T.tmpdir() .. "/opt.csv", o) end,
    { "decimals", "threads" } },
  { "eig.solve", function(o) return eig.solve(A, o) end, { "k", "max_sweeps", "threads" } },
  { "eig.batched", function(o) return eig.batched(mat.batch(3, 4), o) end,
    { "max_sweeps", "threads" } },
  { "eig.solve", function(o) return eig.solve(L, o) end, { "k", "maxiter", "block", "seed" } },
  { "eig.svd", function(o) return eig.svd(A, o) end, { "k" } },
  { "mat.randn", function(o) return mat.randn(3, 3, o) end, { "seed" } },
  { "mat.randsym", function(o) return mat.randsym(30, o) end, { "seed" } },
  { "gwb.bench", function(o) return gwb.bench(function() end, o) end, { "runs", "warmup" } },
}

T.test("a fractional integer option names the option, the value and the rule", function()
  local n = 0
  for _, c in ipairs(cases) do
    for _, key in ipairs(c[3]) do
      for _, bad in ipairs { { 1.5, "got 1.5" }, { 2.5, "got 2.5" }, { 64.5, "got 64.5" } } do
        local msg = T.raises(function() return c[2] { [key] = bad[1] } end,
          key .. " must be a whole number, " .. bad[2], c[1] .. " " .. key)
        T.ok(not msg:find("invalid option", 1, true), msg)
        T.ok(msg:find(c[1], 1, true), "names the function: " .. msg)
        n = n + 1
      end
    end
  end
  T.ok(n >= 100)
end)

T.test("NaN, infinite and out-of-range integer options are refused by name", function()
  T.raises(function() rf.train(d, { trees = 0 / 0 }) end, "trees must be a whole number, got nan")
  T.raises(function() rf.train(d, { trees = math.huge }) end, "trees must be a whole number within")
  T.raises(function() eig.solve(A, { k = 1e300 }) end, "k must be a whole number within +-2^63, got 1e+300")
  T.raises(function() eig.solve(A, { k = -1e300 }) end, "got -1e+300")
  T.raises(function() rf.train(d, { trees = "many" }) end, "option 'trees' must be an integer (got string)")
end)

T.test("whole numbers written as floats are still accepted", function()
  local f = rf.train(d, { trees = 3.0, depth = 2.0, seed = 1.0 })
  T.eq(f.trees, 3)
  T.eq(#eig.solve(A, { k = 2.0 }).values, 2)
end)
