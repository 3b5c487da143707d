
#ifdef __cplusplus
} // extern "C"
#endif
