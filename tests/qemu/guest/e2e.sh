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
. /flaz/e2e-check.sh
. /flaz/e2e-nbd.sh

# wide SERIES NAME FN [ARGS...]: a check of behaviour at scale (bigger data sets, the
# generations' wear, the 64 GiB SSD), of the cache's policy (the cleaner's choices, sequential
# bypass and scans, the sequence lease) or of flaz's own parsing (the on-SSD fuzz), or a second
# variant of one (the hung nbd server beside the killed one), that uses no kernel interface
# the others do not: one of the two Debian kernels' full e2e runs it, SERIES (6.1, or 6.12 for
# every kernel but 6.1), so that neither guest nears its time bound (QEMU_TIMEOUT) and make
# test's two lanes take about as long. Named in FLAZ_ONLY (tests/mutate.sh's e2e mutants, a
# targeted run) it runs on any kernel. (6.1's nbd client timing out on a live socket is not
# checked, only its failing requests of a dead one.)
wide() {
	wide_on=$1
	shift
	case $wide_on in
	6.1 | 6.12) ;;
	*) record "FAIL $1: wide names no series ($wide_on)"; return 0 ;;
	esac
	if [ -n "${FLAZ_ONLY:-}" ]; then
		check "$@"
		return 0
	fi
	case $(uname -r) in
	6.1.*) [ "$wide_on" = 6.1 ] && check "$@" ;;
	*) [ "$wide_on" = 6.12 ] && check "$@" ;;
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
check flazctl-create t_flazctl_create
check flazctl-status t_flazctl_status
check flazctl-status-json t_flazctl_status_json
check flazctl-remove t_flazctl_remove
check flazctl-same-device t_flazctl_same_device
check flazctl-ssd-too-small t_flazctl_ssd_too_small
check flazctl-bad-compressor t_flazctl_bad_compressor
check flazctl-existing-name t_flazctl_existing_name
check flazctl-kernel-refusal t_flazctl_kernel_refusal
check flazctl-list t_flazctl_list
check flazctl-status-all t_flazctl_status_all
check flazctl-list-fields t_flazctl_list_fields
check flazctl-stats t_flazctl_stats
check flazctl-set-get t_flazctl_set_get
check flazctl-prometheus t_flazctl_prometheus
check flazctl-cold-foreign t_flazctl_cold_foreign
check flazctl-activate t_flazctl_activate
check cache-hits t_cache_hits
check cache-invalidate t_cache_invalidate
check cache-partial-write t_cache_partial_write
check cache-partial-write-race t_cache_partial_write_race
check cache-partial-reads t_cache_partial_reads
check cache-partial-reads-4kn-ssd t_cache_partial_reads "$SSD4K"
check cache-partial-race t_cache_partial_race
check cache-partial-tail t_cache_partial_tail
check cache-fs-sector63 t_cache_fs_sector63
check cache-discard t_cache_discard
check cache-compressor-lzo t_cache_compressor table lzo
check cache-compressor-lz4 t_cache_compressor table lz4
check cache-compressor-zstd t_cache_compressor table zstd
check cache-compressor-deflate t_cache_compressor table deflate
check cache-flazctl-lzo t_cache_compressor flazctl lzo
check cache-flazctl-lz4 t_cache_compressor flazctl lz4
check cache-flazctl-zstd t_cache_compressor flazctl zstd
check cache-flazctl-deflate t_cache_compressor flazctl deflate
check cache-fio-comp-8m t_cache_fio comp 8
wide 6.12 cache-fio-comp-48m t_cache_fio comp 48
check cache-fio-rand-8m t_cache_fio rand 8
wide 6.1 cache-fio-rand-48m t_cache_fio rand 48
check cache-fio-zero-8m t_cache_fio zero 8
wide 6.1 cache-fio-zero-48m t_cache_fio zero 48
check cache-capacity t_cache_capacity
check cache-ext4-corpus t_cache_fs_corpus ext4
check cache-ext4-ratio t_cache_fs_ratio ext4
check cache-xfs-corpus t_cache_fs_corpus xfs
check cache-xfs-ratio t_cache_fs_ratio xfs
check cache-remove-then-hdd t_cache_remove_then_hdd
check cache-4kn-ssd t_cache_4kn 4kn-ssd
check cache-4kn-hdd t_cache_4kn 4kn-hdd
check cache-discard-reuse t_cache_discard_reuse
check cache-paged t_cache_paged
check cache-paged-budget t_cache_paged_budget
check cache-paged-online t_cache_paged_online
check cache-alias t_cache_alias
check cache-seq-write-cached t_cache_seq_write_cached
check cache-hit-sizes t_cache_hit_sizes
check cache-hit-race t_cache_hit_race
wide 6.12 cache-cleaner-verify t_cache_cleaner_verify
wide 6.12 cache-cleaner-hot-raw t_cache_cleaner_hot_raw
wide 6.12 cache-cleaner-cold t_cache_cleaner_cold
wide 6.12 cache-cleaner-hot-set t_cache_cleaner_hot_set
wide 6.12 cache-cleaner-hot-set-paged t_cache_cleaner_hot_set paged
check cache-cleaner-fault t_cache_cleaner_fault
wide 6.12 cache-cleaner-move-race t_cache_move_race
wide 6.12 cache-scan-hot-set t_cache_scan_hot_set sequential
wide 6.12 cache-scan-interleaved t_cache_scan_hot_set interleaved
wide 6.12 cache-scan-random t_cache_scan_hot_set random
check persist-warm-dmsetup t_persist_warm dmsetup
check persist-warm-flazctl t_persist_warm flazctl
check persist-background-load t_persist_background_load
check persist-refusals t_persist_refusals
check persist-resize t_persist_resize
check persist-corrupt-sb t_persist_corrupt_sb
check persist-ssd-error-reads t_persist_fault error-reads
check persist-ssd-corrupt-reads t_persist_fault corrupt-reads
check persist-ssd-drop-writes t_persist_fault drop-writes
check persist-ssd-error-writes t_persist_fault error-writes
check persist-fail-closed t_persist_fail_closed unmarked
check persist-fail-closed-marked t_persist_fail_closed marked
check persist-fail-closed-hung t_persist_fail_closed hung
check persist-unusable-ssd t_persist_unusable
check persist-mode-vs-suspend t_persist_mode_vs_suspend
check persist-evict t_persist_evict
check persist-paging t_persist_paging
wide 6.12 persist-gen-wear t_persist_gen_wear
wide 6.12 persist-big t_persist_big
wide 6.12 persist-fuzz t_persist_fuzz
check persist-damaged-gen t_persist_damaged_gen
wide 6.12 persist-seq-restart t_persist_seq_restart
check flazctl-check-kernel-ssd t_flazctl_check_kernel_ssd
check nbd-data t_nbd_data
check nbd-warm-restart t_nbd_warm_restart
check nbd-server-gone t_nbd_server_gone kill
wide 6.12 nbd-server-hung t_nbd_server_gone stop
check module-unload t_module_unload
save_dmesg
