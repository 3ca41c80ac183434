// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz-test.ko: the KUnit suites of dm-flaz (the *_test.c files), built only
 * where the kernel has KUnit. Loading it runs them; what they call in dm-flaz.ko
 * is exported to them alone (EXPORT_SYMBOL_IF_KUNIT).
 */
#include <linux/module.h>

#include "compat.h"

FLAZ_IMPORT_KUNIT_NS();
MODULE_DESCRIPTION("KUnit tests for the dm-flaz target");
MODULE_LICENSE("GPL");
