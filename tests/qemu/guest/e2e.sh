#!/bin/sh
# The e2e suite: the flaz target and flazctl on a real kernel. HDD /dev/vda, SSD /dev/vdb.
# Arguments: only=PREFIX[,PREFIX...] runs only the checks whose names start with one of
# them, and module-load/-unload (run.sh passes FLAZ_ONLY so).
for arg in "$@"; do
	case $arg in
	only=*) FLAZ_ONLY="module- $(echo "${arg#only=}" | tr ',' ' ')" ;;
	esac
done
# busybox mount without -t only tries the filesystems the kernel knows: in a full run the
# ext4 and xfs checks have loaded them before any later check mounts
[ -n "${FLAZ_ONLY:-}" ] && modprobe -q ext4 && modprobe -q xfs
. /flaz/lib.sh
. /flaz/e2e-table.sh
. /flaz/e2e-data.sh
. /flaz/e2e-flazctl.sh
. /flaz/e2e-cache.sh
. /flaz/e2e-persist.sh
. /flaz/e2e-order.sh
. /flaz/e2e-check.sh
. /flaz/e2e-nbd.sh

# check NAME FN [ARGS...] runs on every kernel: what goes through a kernel interface that
# differs between them (compat.h: the completion path, BH workqueue or not; dm-io's error
# notification; zstd's parameters; opening the devices), which is the data path, partial and
# racing I/O, the table's refusals, lz4 and zstd, the SSD's read and write errors, a lost
# SSD or nbd server; and the hot set through a scan, what users see of the policy (issue 33
# asks for both kernels). once SERIES NAME FN [ARGS...] runs in one of the two Debian
# kernels' full e2e, SERIES (6.1, or 6.12 for every kernel but 6.1): a check of flaz's own
# logic over paths the first kind already runs on both (the cache's policy, the table's
# paging, the on-SSD format, resize, flazctl, bigger data sets and other variants), split so
# that make test's two lanes take about as long. A check of dm-flakey's read faults is on
# 6.12, whose dm-flakey has them. Named in FLAZ_ONLY (tests/mutate.sh's e2e mutants, a
# targeted run) a once check runs on any kernel; the reach kernels run CORE (run-all.sh) so.
once() {
	once_on=$1
	shift
	case $once_on in
	6.1 | 6.12) ;;
	*) record "FAIL $1: once names no series ($once_on)"; return 0 ;;
	esac
	if [ -n "${FLAZ_ONLY:-}" ]; then
		check "$@"
		return 0
	fi
	case $(uname -r) in
	6.1.*) [ "$once_on" = 6.1 ] && check "$@" ;;
	*) [ "$once_on" = 6.12 ] && check "$@" ;;
	esac
	return 0
}

check module-load t_module_load
check bad-table-missing-args t_bad_missing_args
check bad-table-no-such-device t_bad_no_device
check bad-table-same-device t_bad_same_device
check bad-table-beyond-hdd t_bad_beyond_hdd
check bad-table-unknown-option t_bad_unknown_option
check bad-table-option-without-value t_bad_option_without_value
check bad-table-bad-compressor t_bad_compressor
check bad-table-extent-kib t_bad_extent_kib
check bad-table-overbook t_bad_overbook
check bad-table-watermarks t_bad_watermarks
check bad-table-duplicate-option t_bad_duplicate_option
check bad-table-ssd-too-small t_bad_ssd_too_small
check bad-table-nothing-left t_nothing_left
check create-remove t_create_remove
check table-roundtrip t_table_roundtrip
check table-no-options t_table_no_options
check table-ops t_table_ops
check status-keys t_status_keys
check status-counters t_status_counters
check message-tunable t_message_tunable
check message-refusals t_message_refusals
check ext4-data t_fs_data ext4
check xfs-data t_fs_data xfs
check fio-verify t_fio_verify
check suspend-reload-during-io t_suspend_during_io
check suspend-reload-after-io t_suspend_after_io
check hdd-has-volume-data t_hdd_has_data
once 6.12 flazctl-create t_flazctl_create
once 6.12 flazctl-status t_flazctl_status
once 6.12 flazctl-status-json t_flazctl_status_json
once 6.12 flazctl-remove t_flazctl_remove
once 6.12 flazctl-same-device t_flazctl_same_device
once 6.12 flazctl-ssd-too-small t_flazctl_ssd_too_small
once 6.12 flazctl-bad-compressor t_flazctl_bad_compressor
once 6.12 flazctl-existing-name t_flazctl_existing_name
once 6.12 flazctl-kernel-refusal t_flazctl_kernel_refusal
once 6.12 flazctl-list t_flazctl_list
once 6.12 flazctl-status-all t_flazctl_status_all
once 6.12 flazctl-list-fields t_flazctl_list_fields
once 6.12 flazctl-stats t_flazctl_stats
once 6.12 flazctl-set-get t_flazctl_set_get
once 6.12 flazctl-prometheus t_flazctl_prometheus
once 6.12 flazctl-cold-foreign t_flazctl_cold_foreign
once 6.12 flazctl-activate t_flazctl_activate
check cache-hits t_cache_hits
check cache-invalidate t_cache_invalidate
once 6.12 cache-split-pages t_cache_split_pages
once 6.12 cache-damaged-slot t_cache_damaged_slot
check cache-partial-write t_cache_partial_write
check cache-partial-write-race t_cache_partial_write_race
check cache-partial-reads t_cache_partial_reads
once 6.1 cache-partial-reads-4kn-ssd t_cache_partial_reads "$SSD4K"
check cache-partial-race t_cache_partial_race
check cache-partial-tail t_cache_partial_tail
once 6.12 cache-fs-sector63 t_cache_fs_sector63
check cache-discard t_cache_discard
once 6.1 cache-compressor-lzo t_cache_compressor table lzo
check cache-compressor-lz4 t_cache_compressor table lz4
check cache-compressor-zstd t_cache_compressor table zstd
once 6.12 cache-compressor-deflate t_cache_compressor table deflate
once 6.12 cache-flazctl-lzo t_cache_compressor flazctl lzo
once 6.12 cache-flazctl-lz4 t_cache_compressor flazctl lz4
once 6.12 cache-flazctl-zstd t_cache_compressor flazctl zstd
once 6.12 cache-flazctl-deflate t_cache_compressor flazctl deflate
once 6.12 cache-fio-comp-8m t_cache_fio comp 8
once 6.12 cache-fio-comp-48m t_cache_fio comp 48
once 6.12 cache-fio-rand-8m t_cache_fio rand 8
once 6.1 cache-fio-rand-48m t_cache_fio rand 48
once 6.12 cache-fio-zero-8m t_cache_fio zero 8
once 6.1 cache-fio-zero-48m t_cache_fio zero 48
once 6.1 cache-capacity t_cache_capacity
once 6.12 cache-watermark-cap t_cache_watermark_cap
once 6.1 cache-ext4-corpus t_cache_fs_corpus ext4
once 6.1 cache-ext4-ratio t_cache_fs_ratio ext4
once 6.12 cache-xfs-corpus t_cache_fs_corpus xfs
once 6.12 cache-xfs-ratio t_cache_fs_ratio xfs
once 6.12 cache-remove-then-hdd t_cache_remove_then_hdd
once 6.12 cache-4kn-ssd t_cache_4kn 4kn-ssd
once 6.1 cache-4kn-hdd t_cache_4kn 4kn-hdd
once 6.12 cache-discard-reuse t_cache_discard_reuse
once 6.1 cache-paged t_cache_paged
once 6.1 cache-paged-budget t_cache_paged_budget
once 6.1 cache-paged-online t_cache_paged_online
once 6.12 cache-alias t_cache_alias
once 6.12 cache-seq-write-cached t_cache_seq_write_cached
once 6.12 cache-hit-sizes t_cache_hit_sizes
check cache-hit-race t_cache_hit_race
once 6.12 cache-cleaner-verify t_cache_cleaner_verify
once 6.12 cache-cleaner-hot-raw t_cache_cleaner_hot_raw
once 6.12 cache-cleaner-cold t_cache_cleaner_cold
once 6.12 cache-cleaner-hot-set t_cache_cleaner_hot_set
once 6.12 cache-cleaner-hot-set-paged t_cache_cleaner_hot_set paged
once 6.12 cache-cleaner-fault t_cache_cleaner_fault
once 6.12 cache-cleaner-move-race t_cache_move_race
check cache-scan-hot-set t_cache_scan_hot_set sequential
once 6.12 cache-scan-interleaved t_cache_scan_hot_set interleaved
check cache-scan-random t_cache_scan_hot_set random
check cache-scan-restart t_cache_scan_hot_set restart
once 6.1 cache-scan-restart-damaged t_cache_scan_hot_set restart-damaged
check persist-warm-dmsetup t_persist_warm dmsetup
once 6.12 persist-warm-flazctl t_persist_warm flazctl
once 6.12 persist-background-load t_persist_background_load
once 6.12 persist-refusals t_persist_refusals
once 6.1 persist-resize t_persist_resize
once 6.1 persist-resize-regions t_persist_resize_regions
once 6.12 persist-corrupt-sb t_persist_corrupt_sb
check persist-ssd-error-reads t_persist_fault error-reads
once 6.12 persist-ssd-corrupt-reads t_persist_fault corrupt-reads
once 6.12 persist-ssd-drop-writes t_persist_fault drop-writes
check persist-ssd-error-writes t_persist_fault error-writes
check persist-fail-closed t_persist_fail_closed unmarked
check persist-commit-order t_persist_commit_order
once 6.12 persist-fail-closed-marked t_persist_fail_closed marked
once 6.12 persist-fail-closed-hung t_persist_fail_closed hung
check persist-unusable-ssd t_persist_unusable
once 6.12 persist-mode-vs-suspend t_persist_mode_vs_suspend
once 6.12 persist-evict t_persist_evict
check persist-flush-covers t_persist_flush_covers
once 6.1 persist-paging t_persist_paging
once 6.1 persist-gen-wear t_persist_gen_wear
once 6.1 persist-big t_persist_big
once 6.1 persist-fuzz t_persist_fuzz
once 6.12 persist-damaged-gen t_persist_damaged_gen
once 6.12 persist-both-fail t_persist_both_fail
once 6.1 persist-seq-restart t_persist_seq_restart
once 6.12 flazctl-check-kernel-ssd t_flazctl_check_kernel_ssd
once 6.1 nbd-data t_nbd_data
once 6.12 nbd-warm-restart t_nbd_warm_restart
check nbd-server-gone t_nbd_server_gone kill
once 6.12 nbd-server-hung t_nbd_server_gone stop
check module-unload t_module_unload
save_dmesg
