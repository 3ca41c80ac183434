#include "../shim.h"
/* compat.h's zstd shim: no compression here */
typedef struct { int x; } zstd_compression_parameters;
typedef struct { zstd_compression_parameters cParams; } zstd_parameters;
static inline zstd_parameters zstd_get_params(int level, size_t size)
{
	zstd_parameters p = { { 0 } };

	(void)level; (void)size;
	return p;
}
static inline size_t zstd_cctx_workspace_bound(const zstd_compression_parameters *p)
{
	(void)p;
	return 0;
}
