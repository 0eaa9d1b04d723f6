// info_cmd.c - `kvstrata info`: the version, the build, this machine's CPU
// and the CUDA devices that answer now (see info_cmd.h).
#include "info_cmd.h"

#include <stdio.h>
#include <string.h>

#include "device.h"
#include "json.h"
#include "machine.h"

#ifndef KS_VERSION
#error "the build defines KS_VERSION"
#endif
#ifndef KS_BUILD_TYPE
#define KS_BUILD_TYPE "unknown"
#endif

static int run_info(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    int json = 0;
    const struct ks_cli_opt opts[] = {
        {.name = "json", .kind = KS_CLI_FLAG, .out = &json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    json_t *o = json_object();
    if (!o)
        return ks_cli_fail(cmd, "out of memory");
    char why[KS_KERNEL_ERR_LEN] = "";
    int n = ks_device_count(why, sizeof why);
    struct ks_machine m;
    ks_machine_init(&m);
    int err = ks_json_set_str(o, "version", KS_VERSION);
    err |= ks_json_set_str(o, "build_type", KS_BUILD_TYPE[0] ? KS_BUILD_TYPE : "none");
    err |= ks_json_set_str(o, "cpu", m.cpu);
    err |= ks_json_set_int(o, "cores", m.cores);
    err |= ks_json_set_bool(o, "cuda_kernels", strcmp(ks_device_backend(), "cuda") == 0);
    err |= ks_json_set_str(o, "device_backend", ks_device_backend());
    err |= ks_json_set_int(o, "cuda_devices", n);
    if (n == 0)
        err |= ks_json_set_str(o, "cuda_note", why);
    int rc = err ? -1 : json ? ks_json_print(stdout, o) : ks_json_print_table(stdout, o, NULL);
    json_decref(o);
    return rc == 0 ? KS_EXIT_OK : ks_cli_fail(cmd, "cannot write the report");
}

const struct ks_cli_cmd ks_info_cmd = {
    .name = "info",
    .summary = "Show the version, the build, the CPU and the CUDA devices usable now",
    .about = "Reports the version, the build type, this machine's CPU (`cpu`: the model\n"
             "/proc/cpuinfo names first, as calibrations and `validate` record it; `cores`:\n"
             "the online CPUs), whether CUDA kernels are compiled in, and how many CUDA\n"
             "devices answer now (0, with the reason, when none does).\n",
    .run = run_info,
};
