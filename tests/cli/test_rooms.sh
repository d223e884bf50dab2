# No cycle among the src/ files of the current build: tools/rooms reads its objects (the CPU
# build's build/obj-cpu/src or the CUDA build's build/obj/src, from UNIT_DIR or the mode of
# the build GWB came from) and exits 1 on a cycle, printing the files and the symbols that tie
# them; a new call upward fails CI here. First the check itself is shown to catch one: two
# objects that call each other.
. tests/lib.sh
command -v python3 >/dev/null || skip "python3 is not installed (tools/rooms is a Python script)"
command -v nm >/dev/null || skip "nm is not installed (binutils)"
command -v cc >/dev/null || skip "no C compiler for the check's own two-file cycle"

mkdir -p "$T/loop"
printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' > "$T/loop/a.c"
printf 'int a(int);\nint b(int x) { return x ? a(x - 1) : 1; }\n' > "$T/loop/b.c"
(cd "$T/loop" && cc -c a.c b.c) || die "could not compile the two-file cycle"
out=$(tools/rooms "$T/loop" 2>&1) && die "rooms passed a cycle: $out"
echo "$out" | grep -q '^cycle: a, b$' || die "rooms did not name the cycle: $out"
echo "$out" | grep -q 'a -> b: b' || die "rooms did not name the symbol: $out"

if [ -n "${UNIT_DIR:-}" ]; then
	obj=${UNIT_DIR%/tests}/src
else
	b=$(dirname "$GWB")
	if [ -f "$b/.mode-1" ]; then obj=$b/obj/src; else obj=$b/obj-cpu/src; fi
fi
ls "$obj"/*.o >/dev/null 2>&1 || skip "no objects in $obj (build first: make CUDA=0 or make)"
out=$(tools/rooms "$obj" 2>&1) || die "cycles among the src/ files ($obj): a lower layer calls a higher one; install a hook or move the code (docs/ARCHITECTURE.md, Layers):
$out"
echo "$out" | grep -q '^rooms: 0 cycle(s)$' || die "rooms did not report 0 cycles: $out"
