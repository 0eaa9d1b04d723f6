// device.h - which accelerators kvstrata can use on this machine, now.
//
// The answer is a probe, not a configuration: a build with CUDA kernels still
// runs where no GPU or driver is present, and then reports zero devices. No
// call here ever exits or aborts; a failed probe is zero devices, with the
// reason kept for ks_device_error.
#ifndef KS_DEVICE_H
#define KS_DEVICE_H

#ifdef __cplusplus
extern "C" {
#endif

// CUDA devices usable now; 0 when CUDA was not compiled in or no GPU or
// driver answers.
int ks_device_count(void);

// The backend compiled in: "cuda" or "none".
const char *ks_device_backend(void);

// Why the last ks_device_count found no device ("" when it found some or
// never ran), as "file:line: call: message". Static storage; not thread-safe.
const char *ks_device_error(void);

#ifdef __cplusplus
}
#endif

#endif
