// machine.c - the machine description of machine.h, from gethostname,
// /proc/cpuinfo, /proc/meminfo, sysconf and the clock.
#define _POSIX_C_SOURCE 200809L // gethostname, gmtime_r

#include "machine.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// The first CPU model line of /proc/cpuinfo ("model name" on x86, "Model"
// elsewhere), or "unknown CPU".
static void cpu_name(char *buf, size_t len)
{
    snprintf(buf, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon || (strncmp(line, "model name", 10) != 0 && strncmp(line, "Model", 5) != 0))
            continue;
        char *s = colon + 1;
        while (*s == ' ' || *s == '\t')
            s++;
        s[strcspn(s, "\n")] = '\0';
        if (*s) {
            snprintf(buf, len, "%s", s);
            break;
        }
    }
    fclose(f);
}

// Replaces what would break a Lua comment line or a table row.
static void printable(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

void ks_machine_init(struct ks_machine *m)
{
    memset(m, 0, sizeof *m);
    if (gethostname(m->host, sizeof m->host) != 0 || !m->host[0])
        snprintf(m->host, sizeof m->host, "unknown host");
    m->host[sizeof m->host - 1] = '\0';
    cpu_name(m->cpu, sizeof m->cpu);
    printable(m->host);
    printable(m->cpu);
    char line[512];
    FILE *f = fopen("/proc/meminfo", "r");
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
    if (!gmtime_r(&now, &tm) || !strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(m->date, sizeof m->date, "unknown date");
}
