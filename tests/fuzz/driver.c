/* driver.c - a main() for the libFuzzer targets without libFuzzer: runs
 * LLVMFuzzerInitialize (when the target has one), then LLVMFuzzerTestOneInput on each file
 * named (its first 4 KB, as make fuzz's -max_len). tests/cli/test_fuzz_link.sh links every
 * target with it against the build's own objects, so a target that no longer links with the
 * library (duplicate or missing symbols) fails make test, not only make fuzz. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);
int main(int argc, char **argv)
{
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		static uint8_t buf[4096];
		size_t n;
		if (!f)
			return 2;
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, n);
	}
	return 0;
}
