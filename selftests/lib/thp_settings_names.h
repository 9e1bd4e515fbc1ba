/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel tree's THP settings helpers (tools/testing/selftests/mm:
 * thp_settings.c on 6.12; hugepage_settings.c and vm_util.c on 7.3) define
 * read_num(), write_num(), read_file() and write_file(), which exit on an
 * error; collapse_test.h has its own read_num() and write_num() that return
 * it. The tree's files are compiled with this header forced in
 * (selftests.mk), and collapse_test.h includes it around the tree's header,
 * so both sets live in one program under different names.
 */
#define read_file	thp_settings_read_file
#define write_file	thp_settings_write_file
#define read_num	thp_settings_read_num
#define write_num	thp_settings_write_num
