// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the extent tenants: a slot older than its extent's opening is
 * an earlier tenant's, also after the 32-bit units wrap, and never a slot of the
 * current tenant.
 */
#include <kunit/test.h>

#include "flaz.h"

#define EXTENTS		64U
#define EXTENT_BYTES	(32U << 10)
/* a unit: twice the slots a 32 KiB extent holds at 32 bytes a slot */
#define UNIT		2048ULL

struct tenants_env {
	atomic64_t seq;
	struct flaz_tenants *t;
};

static struct tenants_env *env_create(struct kunit *test, u64 seq)
{
	struct tenants_env *env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, env);
	atomic64_set(&env->seq, seq);
	env->t = flaz_tenants_create(EXTENTS, EXTENT_BYTES, &env->seq);
	KUNIT_ASSERT_NOT_NULL(test, env->t);
	return env;
}

/* A slot written now: the volume's next seq, as fills take it. */
static u64 slot(struct tenants_env *env)
{
	return atomic64_inc_return(&env->seq);
}

/* Openings of every extent but @keep, with @units of seqs taken before each. */
static void turn(struct tenants_env *env, u32 keep, u64 units)
{
	u32 i;

	for (i = 0; i < EXTENTS; i++) {
		if (i == keep)
			continue;
		atomic64_add(units * UNIT, &env->seq);
		flaz_tenant_open(env->t, i);
	}
}

static void tenant_boundary(struct kunit *test)
{
	struct tenants_env *env = env_create(test, 1700000000000000000ULL);
	u64 before = slot(env), last = slot(env), after;

	/* not opened since activation: every slot counts */
	KUNIT_EXPECT_FALSE(test, flaz_tenant_older(env->t, 3, before));
	flaz_tenant_open(env->t, 3);
	after = slot(env);
	KUNIT_EXPECT_TRUE(test, flaz_tenant_older(env->t, 3, before));
	KUNIT_EXPECT_TRUE(test, flaz_tenant_older(env->t, 3, last));
	KUNIT_EXPECT_FALSE(test, flaz_tenant_older(env->t, 3, after));
	KUNIT_EXPECT_FALSE(test, flaz_tenant_older(env->t, 3, slot(env) + 5 * UNIT));
	KUNIT_EXPECT_FALSE(test, flaz_tenant_older(env->t, 4, before));
	/* the opening took a unit of its own: no slot shares it */
	KUNIT_EXPECT_EQ(test, after - last, UNIT + 1);

	/* a new tenant: the last one's slots are older now */
	flaz_tenant_open(env->t, 3);
	KUNIT_EXPECT_TRUE(test, flaz_tenant_older(env->t, 3, after));
	KUNIT_EXPECT_FALSE(test, flaz_tenant_older(env->t, 3, slot(env)));
	flaz_tenants_destroy(env->t);
}

/* The opening whose unit's low 32 bits are 0 takes the next unit (0: no boundary). */
static void tenant_unit_zero(struct kunit *test)
{
	struct tenants_env *env = env_create(test, (1ULL << 32) * UNIT - UNIT);
	u64 before = slot(env);

	flaz_tenant_open(env->t, 9);
	KUNIT_EXPECT_TRUE(test, flaz_tenant_older(env->t, 9, before));
	KUNIT_EXPECT_FALSE(test, flaz_tenant_older(env->t, 9, slot(env)));
	KUNIT_EXPECT_GT(test, (u64)atomic64_read(&env->seq), ((1ULL << 32) + 1) * UNIT);
	flaz_tenants_destroy(env->t);
}

/*
 * An extent not opened again while the others turn over: its boundary holds
 * while young, is forgotten once old, and never wraps into the future, where
 * its own tenant's slots would read as older (-EILSEQ, a fault, on every hit).
 */
static void tenant_long_lived(struct kunit *test)
{
	struct tenants_env *env = env_create(test, 1ULL << 60);
	u64 before = slot(env), mine;
	u32 round;

	flaz_tenant_open(env->t, 7);
	mine = slot(env);
	/* 2^28 units a turn: young for three turns, then forgotten */
	for (round = 0; round < 3; round++) {
		turn(env, 7, (1ULL << 28) / EXTENTS);
		KUNIT_EXPECT_TRUE_MSG(test, flaz_tenant_older(env->t, 7, before), "turn %u", round);
		KUNIT_EXPECT_FALSE_MSG(test, flaz_tenant_older(env->t, 7, mine), "turn %u", round);
	}
	for (round = 3; round < 40; round++) {
		turn(env, 7, (1ULL << 28) / EXTENTS);
		KUNIT_EXPECT_FALSE_MSG(test, flaz_tenant_older(env->t, 7, mine), "turn %u", round);
	}
	/* 40 turns: 10 * 2^30 units, past a 32-bit wrap twice */
	KUNIT_EXPECT_FALSE(test, flaz_tenant_older(env->t, 7, before));
	flaz_tenant_open(env->t, 7);
	KUNIT_EXPECT_TRUE(test, flaz_tenant_older(env->t, 7, mine));
	KUNIT_EXPECT_FALSE(test, flaz_tenant_older(env->t, 7, slot(env)));
	flaz_tenants_destroy(env->t);
}

/*
 * The hand forgets an opening TENANT_FORGET (2^30) units old, not younger, and
 * not one ahead of the opening that moves it (an opening racing it).
 */
static void tenant_sweep(struct kunit *test)
{
	struct tenants_env *env = env_create(test, 1ULL << 50);
	u64 before = slot(env);
	u32 unit;

	flaz_tenant_open(env->t, 5);
	flaz_tenant_open(env->t, 2);
	unit = atomic64_read(&env->seq) / UNIT;
	flaz_tenants_sweep(env->t, unit - 3, 0);
	KUNIT_EXPECT_TRUE(test, flaz_tenant_older(env->t, 5, before));
	flaz_tenants_sweep(env->t, unit + (1U << 30) - 2, 0);
	KUNIT_EXPECT_TRUE(test, flaz_tenant_older(env->t, 5, before));
	KUNIT_EXPECT_TRUE(test, flaz_tenant_older(env->t, 2, before));
	/* from the last extents round to the first: 2 is forgotten, 5 (one unit older) too */
	flaz_tenants_sweep(env->t, unit + (1U << 30), EXTENTS - 4);
	KUNIT_EXPECT_FALSE(test, flaz_tenant_older(env->t, 2, before));
	KUNIT_EXPECT_FALSE(test, flaz_tenant_older(env->t, 5, before));
	flaz_tenants_destroy(env->t);
}

static struct kunit_case flaz_tenant_cases[] = {
	KUNIT_CASE(tenant_boundary),
	KUNIT_CASE(tenant_unit_zero),
	KUNIT_CASE(tenant_long_lived),
	KUNIT_CASE(tenant_sweep),
	{}
};

static struct kunit_suite flaz_tenant_suite = {
	.name = "flaz_tenant",
	.test_cases = flaz_tenant_cases,
};

kunit_test_suite(flaz_tenant_suite);
