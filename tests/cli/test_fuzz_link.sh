# Every libFuzzer target (tests/fuzz/fuzz_*.c) links with the library and runs: linked by cc
# with tests/fuzz/driver.c (a main in place of libFuzzer's) against this build's objects, then
# run on a few inputs with a fresh HOME in an empty folder; it must exit 0 and write nothing
# outside its FUZZ_DIR (issue 26: `make fuzz FUZZ_TARGETS=npy` did not link, its target
# carrying stubs of intr.c; the mm target wrote a memfd's round trip into /).
. tests/lib.sh
ROOT=$PWD
OBJ=$(dirname "$GWB")/obj-cpu
[ -f "$OBJ/luadata.o" ] && [ -f "$OBJ/src/npy.o" ] ||
	skip "no CPU build's objects beside $GWB (a CUDA build keeps them in obj/ with its trampolines)"
command -v cc >/dev/null || skip "no C compiler (cc)"
FLAGS=(-std=c11 -g -O1 -pthread $(pkg-config --cflags lua5.4 2>/dev/null || echo -I/usr/include/lua5.4)
	-I"$ROOT/src" -I"$ROOT/tests/fuzz" -DGWB_SRCDIR="\"$ROOT\"")
grep -qa __asan_init "$GWB" && FLAGS+=(-fsanitize=address,undefined)
# ISA-L as the Makefile links it: libisal.a where one is installed, else libisal.so.2
ISAL=-l:libisal.so.2
for a in /usr/lib/x86_64-linux-gnu/libisal.a /usr/local/lib/libisal.a; do [ -f "$a" ] && ISAL=-l:libisal.a; done
LIBS=(-l:liblua5.4.a -l:libprotobuf-c.a -l:libreadline.so.8 -l:libncursesw.so.6 -l:libtinfo.so.6
	-l:libpng16.a -l:libsnappy.a -l:libzstd.a "$ISAL" -l:libz.a -l:libjansson.a -lstdc++ -lpthread -lm -ldl)
# a build with MPI (src/mpi.o calls it) links Open MPI as the Makefile does (mpicc --showme:link)
if nm "$OBJ/src/mpi.o" 2>/dev/null | grep -q ' U MPI_Init'; then
	command -v mpicc >/dev/null || skip "the build has MPI but mpicc is not installed"
	LIBS+=($(mpicc --showme:link))
fi
shopt -s nullglob
objs=()
for o in "$OBJ"/src/*.o "$OBJ"/src/onnx/*.o; do [ "$(basename "$o")" = main.o ] || objs+=("$o"); done
# inputs: a CSV head, a Matrix Market file, a .npy array, a patch record and raw bytes
mkdir -p "$T/in" "$T/home" "$T/cwd" "$T/fuzz"
head -c 2000 datasets/iris.csv >"$T/in/csv"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.5\n3 2 -2\n' >"$T/in/mtx"
"$GWB" -e "mat.randn(3, 2, {seed = 1}):save('$T/in/a.npy')" || die "saving a .npy"
printf '\001\000\000\000' >"$T/in/template"
printf '\000\223NUMPY\001' >"$T/in/raw"
{ printf '\001'; head -c 1500 datasets/iris.csv | gzip -c; } >"$T/in/gz"
{ printf '\001'; head -c 1500 datasets/iris.csv | zstd -qc; } >"$T/in/zst"
ls -A / | sort >"$T/root.before"
for src in tests/fuzz/fuzz_*.c; do
	t=$(basename "$src" .c)
	cc "${FLAGS[@]}" -o "$T/$t" "$src" tests/fuzz/driver.c "${objs[@]}" "$OBJ/commit.o" \
		"$OBJ/luadata.o" "${LIBS[@]}" >"$T/$t.link" 2>&1 ||
		die "$t does not link with the library: $(grep -E "multiple definition|undefined|error" "$T/$t.link" | head -5)"
	(cd "$T/cwd" && HOME="$T/home" FUZZ_DIR="$T/fuzz" ASAN_OPTIONS=allocator_may_return_null=1 \
		"$T/$t" "$T"/in/*) >"$T/$t.out" 2>&1 || die "$t on the inputs: $(tail -20 "$T/$t.out")"
	[ -z "$(ls -A "$T/cwd" "$T/home" | grep -v ':$' | grep -v '^$')" ] ||
		die "$t wrote outside its FUZZ_DIR: $(ls -AR "$T/cwd" "$T/home")"
	ls -A / | sort >"$T/root.after"
	cmp -s "$T/root.before" "$T/root.after" ||
		die "$t wrote into /: $(comm -13 "$T/root.before" "$T/root.after")"
done
exit 0
