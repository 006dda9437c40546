// cxx_block.cc: a C++ program blocked in a C++ function, for test_jitmap_stack.py's
// cxx_names: a member function of a class template, a function template (whose mangled name
// carries its return type), a function with a reference parameter and one in an anonymous
// namespace, under main, the innermost in pause() until the test kills it. Built with and
// without -g: GDB names a function its DWARF describes without its signature, one it has
// only a symbol for with it.
#include <unistd.h>

namespace ns {
template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T wait(int n) const
	{
		pause();
		return v + n;
	}
};

template <typename T> __attribute__((noinline)) unsigned long twice(T x)
{
	Box<long> b{x};
	return 2 * (unsigned long)b.wait(1);
}

__attribute__((noinline)) int outer(const Box<long> &b, int n)
{
	return (int)twice<unsigned char>((unsigned char)b.v) + n;
}
} // namespace ns

namespace {
__attribute__((noinline)) int anon(int n)
{
	ns::Box<long> b{n};
	return ns::outer(b, n);
}
} // namespace

int main(int argc, char **)
{
	return anon(argc);
}
