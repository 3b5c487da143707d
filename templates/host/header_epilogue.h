
// Why the last launch function this thread called returned an error of its
// own checks -- the kernel, the parameter, what was expected and what was
// found -- or "" when none failed. Compile the .host.cpp with
// -DTILET_NO_CHECKS to leave the parameter and device checks out.
const char *{{module}}_last_error(void);

#ifdef __cplusplus
} // extern "C"
#endif
