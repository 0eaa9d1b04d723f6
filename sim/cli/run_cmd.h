// run_cmd.h - the `kvstrata run` command.
#ifndef KS_RUN_CMD_H
#define KS_RUN_CMD_H

#include <jansson.h>
#include <stddef.h>

#include "cli.h"
#include "engine.h"
#include "scenario.h"

extern const struct ks_cli_cmd ks_run_cmd;

// A run's summary: figures by key, and a note on each (the same keys on
// stdout, in --json and as /summary attributes). err: a JSON call failed.
struct ks_run_summary {
    json_t *fig, *notes;
    int err;
};

// Adds r's summary figures to s (`validate` summarises the runtime's
// result with the same keys).
void ks_run_summarise(struct ks_run_summary *s, const struct ks_scenario *sc, const struct ks_run_result *r);

// Writes the HDF5 result (/summary, /requests, /steps, /tiers, /links,
// /link_samples) whole or not at all. KS_OK or KS_EIO with the reason in err.
int ks_run_write(const char *path, const struct ks_run_summary *s, const struct ks_run_result *r, char *err,
                 size_t len);

#endif
