// machine.h - the machine a calibration runs on, as a profile's sources and
// the reports name it: host name, CPU model, online cores, memory and the
// date (UTC) the measurement started.
#ifndef KS_MACHINE_H
#define KS_MACHINE_H

#include <stdint.h>

struct ks_machine {
    char host[256]; // "unknown host" when gethostname fails
    char cpu[256];  // /proc/cpuinfo's first CPU model, or "unknown CPU"
    char date[32];  // ISO 8601, UTC
    unsigned cores; // online, >= 1
    uint64_t mem;   // bytes, MemTotal of /proc/meminfo (0: unknown)
};

// Fills *m from this machine and the clock.
void ks_machine_init(struct ks_machine *m);

#endif
