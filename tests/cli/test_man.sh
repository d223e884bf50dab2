# man/gwb.1 renders without warnings.
. tests/lib.sh
command -v man >/dev/null || skip "man is not installed (scripts/install-deps installs man-db)"
LC_ALL=C.UTF-8 MANWIDTH=80 man -E UTF-8 -l man/gwb.1 2>/dev/null | grep -q 'SYNOPSIS' ||
	skip "man cannot render pages here (groff missing?); scripts/install-deps installs groff-base"
warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l man/gwb.1 2>&1 >/dev/null)
[ -z "$warn" ] || die "man page warnings: $warn"
LC_ALL=C.UTF-8 MANWIDTH=80 man -E UTF-8 -l man/gwb.1 2>/dev/null | grep -q 'EXIT STATUS' || die "no EXIT STATUS section"
exit 0
