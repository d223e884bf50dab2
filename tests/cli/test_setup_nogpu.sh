# The set-up on a machine without a GPU, on a fresh copy of the tree: `make demo` builds for the
# CPU only (no nvcc run, nvcc or not), remembers the mode in build/config.mk, builds in parallel
# by default, and `make test` right after it compiles no .cu file and relinks nothing. A build
# of a whole clone (~40 s at 2 cores): it runs where GWB_TEST_BUILD=1 (.ci/run sets it).
. tests/lib.sh
[ "${GWB_TEST_BUILD:-0}" = 1 ] || skip "GWB_TEST_BUILD=1 runs it (.ci/run does): it builds a fresh copy of the tree (~40 s at 2 cores)"
{ [ -e /dev/nvidia0 ] || nvidia-smi -L 2>/dev/null | grep -q '^GPU'; } && skip "a GPU device is present: make picks CUDA here"
command -v git >/dev/null || skip "git is not installed"
src=$PWD
c="$T/clone"
mkdir -p "$c"
# the working tree as it is (tracked and new files, not what .gitignore leaves out)
(cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - 2>/dev/null) |
	tar -xf - -C "$c" || die "could not copy the tree"
cd "$c" || die "no clone"
unset CUDA MAKEFLAGS MFLAGS MAKELEVEL   # a fresh shell's make, not a sub-make of make test's
s0=$(date +%s%N)
make demo > demo.log 2>&1 || die "make demo failed: $(tail -20 demo.log)"
s1=$(date +%s%N)
echo "make demo: $(( (s1 - s0) / 1000000 )) ms wall at $(nproc) CPUs"
grep -q 'run log' demo.log || die "the demo did not reach its end: $(tail -5 demo.log)"
grep -qE '(^|/)nvcc |\.cu( |$)' demo.log && die "make demo compiled CUDA without a GPU: $(grep -m3 -E 'nvcc|\.cu' demo.log)"
[ -d build/obj ] && die "make demo made the CUDA object folder build/obj"
grep -qx 'CUDA := 0' build/config.mk || die "the mode is not remembered in build/config.mk: $(cat build/config.mk 2>&1)"
"$c/build/gwb" -e 'os.exit(gwb.cuda_build and 1 or 0)' || die "build/gwb is a CUDA build"
# parallel by default: nproc jobs
flags=$(make -pn all 2>/dev/null | grep '^MAKEFLAGS')
grep -qE -- "-j$(nproc)( |$)" <<< "$flags" || die "make's default is not $(nproc) jobs: $flags"
gwb_before=$(stat -c %Y build/gwb)
# make test right after (only one tiny test of the suite, the rest is this test's business)
GWB_TEST_FILTER=test_core: GWB_TEST_BUILD=0 make test > test.log 2>&1 || die "make test failed: $(tail -20 test.log)"
grep -qE '(^|/)nvcc |\.cu( |$)' test.log && die "make test compiled a .cu file after make demo: $(grep -m3 -E 'nvcc|\.cu' test.log)"
grep -qE 'src/[a-z_]+\.c$' test.log && die "make test recompiled gwb's sources: $(grep -m3 -E 'src/[a-z_]+\.c$' test.log)"
[ "$(stat -c %Y build/gwb)" = "$gwb_before" ] || die "make test relinked build/gwb"
# (test_core's Lua tests: the runner's label is "test_core: name"; 0 passed would mean none ran)
grep -qE '^[1-9][0-9]* passed, 0 failed' test.log || die "make test did not pass: $(tail -5 test.log)"
grep -qx 'CUDA := 0' build/config.mk || die "make test changed the remembered mode"
exit 0
