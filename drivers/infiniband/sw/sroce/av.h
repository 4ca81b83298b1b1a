/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Address vectors: where a RoCEv2 packet goes, resolved from an
 * rdma_ah_attr when an AH is created or an RC/UC QP gets its path.
 */
#ifndef SROCE_AV_H
#define SROCE_AV_H

#include <linux/etherdevice.h>
#include <linux/in6.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>

/**
 * struct sroce_av - a resolved destination
 * @network_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @dmac: next-hop MAC address (the core resolves it)
 * @tclass: IPv4 TOS / IPv6 traffic class (DSCP and ECN)
 * @hop_limit: IPv4 TTL / IPv6 hop limit
 * @sgid_index: source GID index, for query_ah
 * @flow_label: IPv6 flow label; also seeds the UDP source port
 * @ifindex: the source GID's netdev (a VLAN netdev for VLAN GIDs)
 * @saddr: source address; IPv4 as a v4-mapped IPv6 address
 * @daddr: destination address, the same way
 */
struct sroce_av {
	u8 network_type;
	u8 dmac[ETH_ALEN];
	u8 tclass;
	u8 hop_limit;
	u8 sgid_index;
	u32 flow_label;
	int ifindex;
	struct in6_addr saddr;
	struct in6_addr daddr;
};

/**
 * struct sroce_ah - an address handle
 * @ibah: the core's object; must stay first
 * @av: where it points
 * @ah_num: its number in the device's AH table; user UD WQEs name it
 */
struct sroce_ah {
	struct ib_ah ibah;
	struct sroce_av av;
	u32 ah_num;
};

struct sroce_dev;

/* A path to one of our own GIDs: sroce_tx() skips the IP stack. */
static inline bool sroce_av_is_loopback(const struct sroce_av *av)
{
	return ipv6_addr_equal(&av->daddr, &av->saddr);
}

int sroce_av_from_attr(struct sroce_av *av, const struct rdma_ah_attr *attr);
void sroce_av_to_attr(const struct sroce_av *av, struct rdma_ah_attr *attr);
bool sroce_av_lookup(struct sroce_dev *sdev, u32 ah_num,
		     const struct ib_pd *pd, struct sroce_av *av);

int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int sroce_destroy_ah(struct ib_ah *ibah, u32 flags);

#endif /* SROCE_AV_H */
