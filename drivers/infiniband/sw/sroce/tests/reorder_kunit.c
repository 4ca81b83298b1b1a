// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the list of packets held past a PSN gap (reorder.c).
 *
 * What it proves, of sroce_held_insert():
 *  - whatever order packets come in, the list is in PSN order, also
 *    across the wrap of the 24-bit PSN;
 *  - a second packet with a PSN already held is not added (a copy);
 *  - a full list refuses a new PSN, but still recognises a copy;
 *  - a packet added carries its PSN in skb->cb and holds a reference of
 *    its own: the caller's reference stays the caller's.
 */
#include <kunit/test.h>
#include <linux/skbuff.h>

#include "../sroce.h"
#include "../qp.h"
#include "../reorder.h"
#include "../rx.h"

/* An empty packet for the list; the caller frees it. */
static struct sk_buff *reorder_skb(struct kunit *test)
{
	struct sk_buff *skb = alloc_skb(0, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, skb);
	return skb;
}

/* Insert @n packets with the PSNs in @psns, each must be added. */
static void reorder_insert_all(struct kunit *test, struct sk_buff_head *held,
			       const u32 *psns, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct sk_buff *skb = reorder_skb(test);

		KUNIT_EXPECT_EQ(test, sroce_held_insert(held, psns[i], skb, 64),
				SROCE_HELD_ADDED);
		/* The list took its own reference; drop ours. */
		kfree_skb(skb);
	}
}

/* The PSNs in @held, in list order, are @want. */
static void reorder_expect_order(struct kunit *test, struct sk_buff_head *held,
				 const u32 *want, unsigned int n)
{
	struct sk_buff *skb;
	unsigned int i = 0;

	KUNIT_ASSERT_EQ(test, skb_queue_len(held), n);
	skb_queue_walk(held, skb) {
		KUNIT_EXPECT_EQ_MSG(test, SROCE_SKB_CB(skb)->psn, want[i],
				    "at position %u", i);
		i++;
	}
}

/*
 * Packets in any order come out in PSN order, modulo 2^24: 0xfffffe
 * comes before 0 and 1.
 */
static void reorder_sorted_test(struct kunit *test)
{
	static const struct {
		u32 in[7], want[7];
		unsigned int n;
	} cases[] = {
		{ { 105, 101, 103, 110, 102, 104, 100 },
		  { 100, 101, 102, 103, 104, 105, 110 }, 7 },
		{ { 1, 0xfffffe, 0, 0xffffff },
		  { 0xfffffe, 0xffffff, 0, 1 }, 4 },
	};
	struct sk_buff_head held;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		__skb_queue_head_init(&held);
		reorder_insert_all(test, &held, cases[i].in, cases[i].n);
		reorder_expect_order(test, &held, cases[i].want, cases[i].n);
		__skb_queue_purge(&held);
	}
}

static void reorder_copy_test(struct kunit *test)
{
	static const u32 in[] = { 7, 9 };
	struct sk_buff_head held;
	struct sk_buff *skb;

	__skb_queue_head_init(&held);
	reorder_insert_all(test, &held, in, ARRAY_SIZE(in));
	skb = reorder_skb(test);
	KUNIT_EXPECT_EQ(test, sroce_held_insert(&held, 9, skb, 64),
			SROCE_HELD_COPY);
	KUNIT_EXPECT_EQ(test, sroce_held_insert(&held, 7, skb, 64),
			SROCE_HELD_COPY);
	/* Not added: ours is the only reference. */
	KUNIT_EXPECT_EQ(test, refcount_read(&skb->users), 1);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&held), 2);
	kfree_skb(skb);
	__skb_queue_purge(&held);
}

static void reorder_full_test(struct kunit *test)
{
	static const u32 in[] = { 20, 22, 24 };
	struct sk_buff_head held;
	struct sk_buff *skb;

	__skb_queue_head_init(&held);
	reorder_insert_all(test, &held, in, ARRAY_SIZE(in));
	skb = reorder_skb(test);
	KUNIT_EXPECT_EQ(test, sroce_held_insert(&held, 21, skb, 3),
			SROCE_HELD_FULL);
	KUNIT_EXPECT_EQ(test, sroce_held_insert(&held, 30, skb, 3),
			SROCE_HELD_FULL);
	KUNIT_EXPECT_EQ(test, sroce_held_insert(&held, 22, skb, 3),
			SROCE_HELD_COPY);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&held), 3);
	KUNIT_EXPECT_EQ(test, sroce_held_insert(&held, 21, skb, 4),
			SROCE_HELD_ADDED);
	/* Added: the list holds a reference besides ours. */
	KUNIT_EXPECT_EQ(test, refcount_read(&skb->users), 2);
	kfree_skb(skb);
	__skb_queue_purge(&held);
}

static struct kunit_case sroce_reorder_cases[] = {
	KUNIT_CASE(reorder_sorted_test),
	KUNIT_CASE(reorder_copy_test),
	KUNIT_CASE(reorder_full_test),
	{}
};

static struct kunit_suite sroce_reorder_suite = {
	.name = "sroce_reorder",
	.test_cases = sroce_reorder_cases,
};

kunit_test_suites(&sroce_reorder_suite);
