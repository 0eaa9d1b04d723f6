// device.h - which accelerators kvstrata can use on this machine, now.
//
// The answer is a probe, not a configuration: a build with CUDA kernels still
// runs where no GPU or driver is present, and then reports zero devices. No
// call here ever exits or aborts; a failed probe is zero devices, with the
// reason in the caller's err (kernel.h's error style: err NULL or len 0, no
// reason wanted; KS_KERNEL_ERR_LEN bytes hold it).
#ifndef KS_DEVICE_H
#define KS_DEVICE_H

#include <stddef.h>

#include "kernel.h" // KS_KERNEL_ERR_LEN

#ifdef __cplusplus
extern "C" {
#endif

// CUDA devices usable now; 0 when CUDA was not compiled in or no GPU or
// driver answers, and then why in err: "file:line: call: message" for the
// CUDA call that failed, or what else was missing. err is untouched when
// devices answer.
int ks_device_count(char *err, size_t len);

// The backend compiled in: "cuda" or "none".
const char *ks_device_backend(void);

#ifdef __cplusplus
}
#endif

#endif
