/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Limits and constants sroce advertises to the RDMA core and to users.
 */
#ifndef SROCE_PARAMS_H
#define SROCE_PARAMS_H

#include <linux/gfp.h>
#include <linux/sizes.h>
#include <rdma/ib_verbs.h>

#define SROCE_UDP_PORT		4791	/* IANA RoCEv2 */
#define SROCE_UVERBS_ABI_VERSION 2	/* the rxe user ABI librxe speaks */

#define SROCE_VENDOR_ID		0xffffff	/* no OUI: a software device */
#define SROCE_FW_MAJOR		0
#define SROCE_FW_MINOR		1
#define SROCE_FW_SUBMINOR	0

/*
 * Headroom for the headers around a RoCEv2 payload: Ethernet(14) + VLAN(4)
 * + IPv6(40) + UDP(8) + BTH(12) + the largest extension (RETH 16 or
 * AtomicETH 28) + ICRC(4), rounded up.  The IB path MTU is the largest
 * IB MTU that fits the netdev MTU once these are taken off.
 */
#define SROCE_MAX_HDR_LEN	80

#define SROCE_GID_TABLE_LEN	128
#define SROCE_PKEY_TABLE_LEN	1
#define SROCE_MAX_MSG_SIZE	SZ_2G	/* IBTA limit for one message */

#define SROCE_MAX_QP		0x10000
/*
 * Ring capacities are 2^n - 1 (one slot stays empty): a request for the
 * maximum must not round up past it.
 */
#define SROCE_MAX_QP_WR		0x3fff
#define SROCE_MAX_SGE		32
#define SROCE_MAX_SGE_RD	32
#define SROCE_MAX_INLINE	512
#define SROCE_MAX_CQ		0x10000
#define SROCE_MAX_CQE		0xffff
#define SROCE_MAX_MR		0x10000
#define SROCE_MAX_MW		0x10000
#define SROCE_MAX_MR_SIZE	BIT_ULL(38)	/* 256 GiB */
#define SROCE_MAX_PD		0x10000
#define SROCE_MAX_AH		0x10000
#define SROCE_MAX_SRQ		0x4000
#define SROCE_MAX_SRQ_WR	0x3fff
#define SROCE_MAX_SRQ_SGE	32
#define SROCE_MAX_RD_ATOM	128
#define SROCE_MAX_FAST_REG_PAGES 512
#define SROCE_MAX_MCAST_GRP	0x2000
#define SROCE_MAX_MCAST_QP_ATTACH 56
#define SROCE_MAX_TOTAL_MCAST_QP_ATTACH \
	(SROCE_MAX_MCAST_GRP * SROCE_MAX_MCAST_QP_ATTACH)
#define SROCE_LOCAL_CA_ACK_DELAY 15	/* 4.096 us * 2^15 = 134 ms */
#define SROCE_PAGE_SIZE_CAP	0xfffff000	/* 4 KiB .. 2 GiB pages */

/*
 * Memory a user's verb asks for in sizes of its choosing (rings, WQE
 * copies, MR page arrays): charged to its memory cgroup, and over the
 * limit a failure (ENOMEM), not the OOM killer.
 */
#define SROCE_GFP_USER	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

#endif /* SROCE_PARAMS_H */
