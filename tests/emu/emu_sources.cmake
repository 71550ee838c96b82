# The emulated runtime's sources, named once: tests/emu links them into every emulator;
# bench/ compiles them too, so that the benchmarks build without the tests.
set(DEVEMU_RUNTIME_SOURCES emu_core.c emu_clock.c emu_buffers.c emu_call.c emu_drive.c emu_faults.c)
