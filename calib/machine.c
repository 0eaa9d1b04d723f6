// machine.c - the machine description of machine.h, from gethostname,
// /proc/cpuinfo, /proc/meminfo, sysconf and the clock.
#define _POSIX_C_SOURCE 200809L // gethostname, gmtime_r

#include "machine.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void ks_machine_init(struct ks_machine *m)
{
    memset(m, 0, sizeof *m);
    if (gethostname(m->host, sizeof m->host) != 0 || !m->host[0])
        snprintf(m->host, sizeof m->host, "unknown");
    m->host[sizeof m->host - 1] = '\0';
    snprintf(m->cpu, sizeof m->cpu, "unknown CPU");
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            const char *c = strchr(line, ':');
            if (c) {
                c += 1 + (c[1] == ' ');
                snprintf(m->cpu, sizeof m->cpu, "%.*s", (int)strcspn(c, "\n"), c);
            }
            break;
        }
    if (f)
        fclose(f);
    f = fopen("/proc/meminfo", "r");
    unsigned long long kb;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
            m->mem = (uint64_t)kb * 1024;
            break;
        }
    if (f)
        fclose(f);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    m->cores = n > 0 ? (unsigned)n : 1;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
