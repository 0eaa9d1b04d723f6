// calib_cmd.c - what the calib commands share (calib_cmd.h): the progress
// line on a terminal and the checks of their -o, --dir and --base options.
#define _POSIX_C_SOURCE 200809L // isatty

#include "calib_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "measure.h"
#include "profile.h"
#include "scenario.h"
#include "ssd.h"
#include "status.h"

enum { ERR_LEN = 4096 };

static void progress_line(void *ctx, const char *line)
{
    (void)ctx;
    if (line) {
        fputs("\r", stderr);
        fputs(line, stderr);
        fputs("\033[K", stderr);
    } else
        fputs("\r\033[K", stderr);
}

struct ks_progress ks_calib_cmd_progress(void)
{
    return (struct ks_progress){.fn = isatty(STDERR_FILENO) ? progress_line : NULL};
}

int ks_calib_cmd_out(const struct ks_cli_cmd *cmd, const char *out)
{
    char err[ERR_LEN];
    int st = ks_calib_profile_check_out(out, err, sizeof err);
    if (st == KS_EINVAL)
        return ks_cli_usage_error(cmd, "-o %s: %s", out, err);
    return st == KS_OK ? 0 : ks_cli_fail(cmd, "-o %s: %s", out, err);
}

int ks_calib_cmd_dir(const struct ks_cli_cmd *cmd, const char *dir)
{
    char err[ERR_LEN];
    return ks_ssd_check_dir(dir, err, sizeof err) == KS_OK ? 0 : ks_cli_fail(cmd, "--dir %s", err);
}

char *ks_calib_cmd_base(const struct ks_cli_cmd *cmd, const char *base, int *status)
{
    char *file = ks_calib_profile_find(base);
    if (!file) {
        *status = ks_cli_usage_error(cmd, "--base %s: no such profile (a name under calib/profiles or a file)", base);
        return NULL;
    }
    char err[ERR_LEN];
    if (ks_scenario_check_profile(file, NULL, err, sizeof err) != KS_OK) {
        *status = ks_cli_fail(cmd, "--base %s is not a valid profile:\n%s", base, err);
        free(file);
        return NULL;
    }
    return file;
}

int ks_calib_cmd_fail(const struct ks_cli_cmd *cmd, int st, const char *err)
{
    if (st == KS_MEASURE_EDIR)
        return ks_cli_fail(cmd, "--dir %s", err);
    return ks_cli_fail(cmd, "%s", err);
}
