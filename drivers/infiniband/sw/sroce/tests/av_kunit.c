// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for address vectors (ah.c): what an AH or an RC/UC path
 * resolves to, and back.
 *
 * What it proves:
 *  - sroce_av_from_attr() refuses, with -EINVAL and before it looks at
 *    the GID table, an attribute without a GRH, a GRH without a source
 *    GID, an InfiniBand or RoCE v1 source GID (only RoCE v2, over IPv4 or
 *    IPv6, is sroce's), and an IPv4 source with a destination that is not
 *    an IPv4-mapped address (which would send an IPv4 packet to an IPv6
 *    address);
 *  - sroce_av_to_attr() gives query_ah/query_qp back the RoCE attribute
 *    the AV came from: port 1, a GRH with the destination GID, flow
 *    label, source GID index, hop limit and traffic class, and the MAC;
 *    for IPv4 and IPv6, with the largest field values.
 */
#include <kunit/test.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>

#include "../av.h"

static const u8 av_v4_gid[16] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1,
};

static const u8 av_v6_gid[16] = {
	0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
};

/* A RoCE attribute with a GRH from @sgid to @dgid (16 bytes each). */
static void av_attr(struct rdma_ah_attr *attr, struct ib_gid_attr *sgid,
		    enum ib_gid_type type, const u8 *sgid_raw,
		    const u8 *dgid_raw)
{
	union ib_gid dgid;

	memset(attr, 0, sizeof(*attr));
	memset(sgid, 0, sizeof(*sgid));
	memcpy(dgid.raw, dgid_raw, sizeof(dgid.raw));
	memcpy(sgid->gid.raw, sgid_raw, sizeof(sgid->gid.raw));
	sgid->gid_type = type;
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_grh(attr, &dgid, 0, 1, 64, 0);
	attr->grh.sgid_attr = sgid;
}

static void av_from_attr_rejects_test(struct kunit *test)
{
	struct ib_gid_attr sgid;
	struct rdma_ah_attr attr;
	struct sroce_av av;

	/* no GRH: RoCE needs one */
	av_attr(&attr, &sgid, IB_GID_TYPE_ROCE_UDP_ENCAP, av_v4_gid, av_v4_gid);
	attr.ah_flags &= ~IB_AH_GRH;
	KUNIT_EXPECT_EQ(test, sroce_av_from_attr(&av, &attr), -EINVAL);

	/* a GRH, no source GID */
	av_attr(&attr, &sgid, IB_GID_TYPE_ROCE_UDP_ENCAP, av_v4_gid, av_v4_gid);
	attr.grh.sgid_attr = NULL;
	KUNIT_EXPECT_EQ(test, sroce_av_from_attr(&av, &attr), -EINVAL);

	/* InfiniBand and RoCE v1 GIDs, IPv4 or IPv6 alike */
	av_attr(&attr, &sgid, IB_GID_TYPE_IB, av_v6_gid, av_v6_gid);
	KUNIT_EXPECT_EQ(test, sroce_av_from_attr(&av, &attr), -EINVAL);
	av_attr(&attr, &sgid, IB_GID_TYPE_ROCE, av_v4_gid, av_v4_gid);
	KUNIT_EXPECT_EQ(test, sroce_av_from_attr(&av, &attr), -EINVAL);
	av_attr(&attr, &sgid, IB_GID_TYPE_ROCE, av_v6_gid, av_v6_gid);
	KUNIT_EXPECT_EQ(test, sroce_av_from_attr(&av, &attr), -EINVAL);

	/* an IPv4 source, an IPv6 destination */
	av_attr(&attr, &sgid, IB_GID_TYPE_ROCE_UDP_ENCAP, av_v4_gid, av_v6_gid);
	KUNIT_EXPECT_EQ(test, sroce_av_from_attr(&av, &attr), -EINVAL);
}

/* The AV of each case, and what query_ah must report for it. */
static void av_to_attr_test(struct kunit *test)
{
	static const struct {
		const u8 *daddr;
		u8 network_type;
		u32 flow_label;
		u8 sgid_index, hop_limit, tclass;
		u8 dmac[ETH_ALEN];
	} cases[] = {
		{ av_v4_gid, RDMA_NETWORK_IPV4, 0, 1, 64, 0,
		  { 0x02, 0, 0, 0, 0, 1 } },
		{ av_v6_gid, RDMA_NETWORK_IPV6, 0x12345, 3, 1, 0x68,
		  { 0x52, 0x54, 0, 0x12, 0x34, 0x56 } },
		/* the largest values each field holds */
		{ av_v6_gid, RDMA_NETWORK_IPV6, 0xfffff, 255, 255, 255,
		  { 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe } },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct ib_global_route *grh;
		struct rdma_ah_attr attr;
		struct sroce_av av = {};

		av.network_type = cases[i].network_type;
		memcpy(&av.daddr, cases[i].daddr, sizeof(av.daddr));
		memcpy(av.dmac, cases[i].dmac, ETH_ALEN);
		av.flow_label = cases[i].flow_label;
		av.sgid_index = cases[i].sgid_index;
		av.hop_limit = cases[i].hop_limit;
		av.tclass = cases[i].tclass;
		memset(&attr, 0x5a, sizeof(attr));
		attr.ah_flags = 0;

		sroce_av_to_attr(&av, &attr);
		grh = rdma_ah_read_grh(&attr);
		KUNIT_EXPECT_EQ(test, attr.type, RDMA_AH_ATTR_TYPE_ROCE);
		KUNIT_EXPECT_EQ(test, rdma_ah_get_port_num(&attr), 1);
		KUNIT_EXPECT_TRUE(test, rdma_ah_get_ah_flags(&attr) & IB_AH_GRH);
		KUNIT_EXPECT_MEMEQ(test, grh->dgid.raw, cases[i].daddr, 16);
		KUNIT_EXPECT_EQ(test, grh->flow_label, cases[i].flow_label);
		KUNIT_EXPECT_EQ(test, grh->sgid_index, cases[i].sgid_index);
		KUNIT_EXPECT_EQ(test, grh->hop_limit, cases[i].hop_limit);
		KUNIT_EXPECT_EQ(test, grh->traffic_class, cases[i].tclass);
		KUNIT_EXPECT_PTR_EQ(test, grh->sgid_attr, NULL);
		KUNIT_EXPECT_MEMEQ(test, attr.roce.dmac, cases[i].dmac, ETH_ALEN);
		KUNIT_EXPECT_EQ(test,
				ipv6_addr_v4mapped((struct in6_addr *)grh->dgid.raw),
				cases[i].network_type == RDMA_NETWORK_IPV4);
	}
}

static struct kunit_case sroce_av_cases[] = {
	KUNIT_CASE(av_from_attr_rejects_test),
	KUNIT_CASE(av_to_attr_test),
	{}
};

static struct kunit_suite sroce_av_suite = {
	.name = "sroce_av",
	.test_cases = sroce_av_cases,
};

kunit_test_suites(&sroce_av_suite);
