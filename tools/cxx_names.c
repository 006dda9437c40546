/* cxx_names.c: C++ function names as GDB prints them in a backtrace, for jitmap-stack.
 *
 * jitmap-stack numbers frames as GDB does and names them as GDB does; libdwfl gives a native
 * frame its ELF symbol, mangled for C++. GDB 13 prints two forms [checked: GDB 13.1, g++ 12]:
 * a function it has only a symbol for by the demangled symbol, parameters included
 * ("ns::Box<long>::wait(int) const ()", "unsigned long ns::twice<unsigned char>(unsigned
 * char) ()"); a function its DWARF describes by the name its DWARF reader computes, with no
 * parameters and no return type ("ns::Box<long>::wait", "ns::twice<unsigned char>",
 * "(anonymous namespace)::anon"). That name is not the DWARF's own spelling (DW_AT_name
 * says "Box<long int>"): GDB canonicalizes it with the demangler's printer, so the demangled
 * symbol without its signature is the same text.
 *
 * The demangler is the C++ runtime's __cxa_demangle (libstdc++'s, which eu-stack uses too),
 * loaded with dlopen at the first mangled name, not linked: a stack of C code (most JIT
 * runtimes) costs nothing, where libstdc++ linked in costs every run its loading and 1,700
 * relocations (1.6 million instructions, counted with valgrind on a program that does
 * nothing), and a system without libstdc++ still runs jitmap-stack, with mangled names.
 */
#define _GNU_SOURCE
#include "cxx_names.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef char *cxa_demangle_fn(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn *demangler(void)
{
	static bool tried;
	static cxa_demangle_fn *fn;
	if (!tried) {
		tried = true;
		void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (lib)
			*(void **)&fn = dlsym(lib, "__cxa_demangle");
	}
	return fn;
}

/* `symbol` demangled, without an ELF symbol version ("@@GLIBCXX_3.4"), which GDB does not
 * show. */
static char *demangle(const char *symbol)
{
	cxa_demangle_fn *fn = demangler();
	if (!fn)
		return NULL;
	const char *at = strchr(symbol, '@');
	char *base = at ? strndup(symbol, (size_t)(at - symbol)) : NULL;
	int status = -1;
	char *out = fn(base ? base : symbol, NULL, NULL, &status);
	free(base);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* A demangled function name `d` as GDB's DWARF reader names the function, in place: the
 * parameter list and what follows it (" const", " &&") go, and a function template's return
 * type ("unsigned long ns::twice<unsigned char>(unsigned char)": the only names that carry
 * one). A name this does not understand is left whole. */
static void strip_signature(char *d)
{
	size_t end = strlen(d);
	while (end && d[end - 1] != ')') { /* the qualifiers after the parameters */
		const char c = d[end - 1];
		if (c != ' ' && c != '&' && (c < 'a' || c > 'z'))
			return;
		end--;
	}
	if (!end)
		return;
	int depth = 0;
	size_t open = end;
	do { /* back to the '(' of the parameter list (their types nest parentheses) */
		open--;
		depth += d[open] == ')' ? 1 : d[open] == '(' ? -1 : 0;
	} while (depth && open > 0);
	if (depth || open == 0)
		return;
	d[open] = 0;
	if (d[open - 1] != '>')
		return;
	/* A template: the return type ends at the last space outside brackets, before an
	 * operator's name (whose characters are not brackets: "operator<< <...>"). */
	size_t cut = 0;
	depth = 0;
	for (size_t i = 0; d[i]; i++) {
		const char c = d[i];
		if (!depth && !strncmp(d + i, "operator", 8))
			break;
		depth += (c == '<' || c == '(' || c == '[' || c == '{') ? 1
			 : (c == '>' || c == ')' || c == ']' || c == '}') ? -1 : 0;
		if (!depth && c == ' ')
			cut = i + 1;
	}
	memmove(d, d + cut, strlen(d + cut) + 1);
}

char *stack_cxx_name(const char *symbol, bool described)
{
	if (!symbol || strncmp(symbol, "_Z", 2))
		return NULL;
	char *name = demangle(symbol);
	if (name && described)
		strip_signature(name);
	return name;
}
