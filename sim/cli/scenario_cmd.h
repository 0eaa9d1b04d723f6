// scenario_cmd.h - `kvstrata scenario check`: load, validate and show a scenario.
#ifndef KS_SCENARIO_CMD_H
#define KS_SCENARIO_CMD_H

#include <stddef.h>

#include "cli.h"
#include "scenario.h"

extern const struct ks_cli_cmd ks_scenario_check_cmd;

// Loads a scenario for a command: on success returns KS_EXIT_OK with *out
// set (free it with ks_scenario_free); otherwise prints the errors on stderr
// and returns the exit status (KS_EXIT_USAGE for bad input).
int ks_scenario_cmd_load(const struct ks_cli_cmd *cmd, const char *file, const char *const *sets, size_t n_sets,
                         struct ks_scenario **out);

// The same, with a --seed value (NULL: none) applied after the sets as
// `seed=N`; a seed that is not a whole number is a usage error. With
// no_kernel_time the profile's kernel_time is left out (ks_scenario_params).
int ks_scenario_cmd_load_seed(const struct ks_cli_cmd *cmd, const char *file, const char *const *sets,
                              size_t n_sets, const char *seed_text, int no_kernel_time, struct ks_scenario **out);

#endif
