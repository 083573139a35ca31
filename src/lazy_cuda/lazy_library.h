/* What a lazy forwarder's generated parts (make_forwarder.py) and its loader (lazy_library.c)
 * share. Nothing here is exported: the forwarder exports the real library's functions only. */
#pragma once

#pragma GCC visibility push(hidden)

extern const char* const tessera_lazy_soname;
extern const unsigned tessera_lazy_count;
extern const char* const tessera_lazy_names[];
extern const char* const tessera_lazy_dependencies[]; /* null-terminated: its CUDA libraries without a forwarder */
extern const unsigned char tessera_lazy_returns_text[]; /* 1: the function returns a status's name */
extern void* tessera_lazy_slots[]; /* the trampolines' targets, empty until the first call */

/* Loads the real library on the first call (every thread's first call waits for that one), fills
 * every slot (with a stand-in reporting the failure where the library or a function is missing),
 * and returns the function of slot `index`: the trampolines' way in. */
void* tessera_lazy_resolve(unsigned index);

#pragma GCC visibility pop
