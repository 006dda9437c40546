/* minimal.c: the smallest complete use of jitmap's producer API (docs/producer.md).
 *
 * Emits one x86-64 function that keeps a VM value in rbx across a call into the runtime,
 * describes that call site with the stackmap builder, registers the code with the debuggers,
 * runs it, and unregisters it. Break in `runtime_safepoint` to see `jit_answer` in GDB or LLDB.
 * Exits 0 when the JIT code returned what it should.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "jitmap/producer.h"

/* The runtime function the JIT code calls: a safepoint, where a debugger user would stop. */
__attribute__((noinline, visibility("default"))) uint64_t runtime_safepoint(uint64_t v)
{
	printf("safepoint: the VM value is %llu\n", (unsigned long long)v);
	return v + 1;
}

int main(void)
{
	/* 1. Emit: jit_answer() { rbx = 42; return runtime_safepoint(rbx); }  */
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	uint64_t callee = (uint64_t)(uintptr_t)runtime_safepoint;
	size_t n = 0;
	const uint8_t prologue[] = {
		0x53,                         /* push rbx (aligns the stack for the call) */
		0xbb, 42, 0, 0, 0,            /* mov ebx, 42 */
		0x48, 0x89, 0xdf,             /* mov rdi, rbx */
		0x48, 0xb8,                   /* mov rax, imm64 (runtime_safepoint) */
	};
	memcpy(code + n, prologue, sizeof(prologue)), n += sizeof(prologue);
	memcpy(code + n, &callee, 8), n += 8;
	code[n++] = 0xff, code[n++] = 0xd0;   /* call rax */
	const uint32_t call_return = (uint32_t)n; /* the stackmap record's offset */
	code[n++] = 0x5b;                     /* pop rbx */
	code[n++] = 0xc3;                     /* ret */
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 1;
	const uint64_t addr = (uint64_t)(uintptr_t)code;

	/* 2. Describe the call site: at its return address, the VM value is in rbx (DWARF 3),
	 *    and the frame is 8 bytes (the push). */
	jitmap_error err;
	jitmap_smbuilder *b = jitmap_smbuilder_new(JITMAP_ORDER_AUTO);
	const jitmap_location live[] = {{JITMAP_LOC_REGISTER, 8, 3 /* rbx */, 0}};
	void *stackmap;
	size_t stackmap_size;
	if (!b || jitmap_smbuilder_add_function(b, addr, 8, &err) ||
	    jitmap_smbuilder_add_record(b, 1 /* ID */, call_return, live, 1, NULL, 0, &err) ||
	    jitmap_smbuilder_finish(b, &stackmap, &stackmap_size)) {
		fprintf(stderr, "stackmap: %s\n", b ? err.reason : "out of memory");
		return 1;
	}
	jitmap_smbuilder_free(b);

	/* 3. Register: one region, its functions, its stackmap (kept alive until unregistered). */
	const jitmap_jit_function fn = {"jit_answer", addr, n};
	const jitmap_jit_region region = {
		.address = addr, .size = n, .functions = &fn, .num_functions = 1,
		.stackmap = stackmap, .stackmap_size = stackmap_size,
	};
	jitmap_jit_entry *entry = jitmap_jit_register(&region, &err);
	if (!entry) {
		fprintf(stderr, "register: %s (%s)\n", err.reason, strerror(-err.code));
		return 1;
	}

	/* 4. Run it. */
	const uint64_t got = ((uint64_t (*)(void))(uintptr_t)addr)();
	printf("jit_answer() = %llu\n", (unsigned long long)got);

	/* 5. Unregister, then free what the registration pointed at. */
	jitmap_jit_unregister(entry);
	free(stackmap);
	munmap(code, 4096);
	return got == 43 ? 0 : 1;
}
