/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sroce: the RoCEv2 wire format.
 *
 * Everything here is pure: header layouts, the opcode table, decoding and
 * encoding of the InfiniBand transport headers that follow the UDP header,
 * PSN arithmetic, AETH syndromes and the ICRC.  Nothing depends on a QP or
 * a device, so the whole file can be unit tested on its own.
 *
 * A RoCEv2 packet, after the UDP header:
 *
 *   BTH | extension headers | payload | pad (0-3) | ICRC (4)
 *
 * The extension headers an opcode carries always appear in this order:
 * DETH, FETH, RETH or AtomicETH, AETH, AtomicAckETH, ImmDt or IETH.
 */
#ifndef SROCE_WIRE_H
#define SROCE_WIRE_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>

struct sk_buff;

/*
 * The header structs are __packed: in a received frame the BTH starts 42
 * bytes (Ethernet, IPv4, UDP) after an aligned buffer start, so no field
 * is reliably more than 2-byte aligned, and the 64-bit fields sit at
 * 4-byte offsets even relative to the BTH.  Plain field accesses through
 * them are then correct at any alignment.
 */

/* Header lengths in bytes */
#define SROCE_BTH_LEN		12
#define SROCE_DETH_LEN		8
#define SROCE_FETH_LEN		4
#define SROCE_RETH_LEN		16
#define SROCE_ATMETH_LEN	28
#define SROCE_AETH_LEN		4
#define SROCE_ATMACK_LEN	8
#define SROCE_IMMDT_LEN		4
#define SROCE_IETH_LEN		4
#define SROCE_ICRC_LEN		4
/* BTH and the largest set of extension headers (AtomicETH) */
#define SROCE_WIRE_MAX_HDR_LEN	(SROCE_BTH_LEN + SROCE_ATMETH_LEN)

#define SROCE_QPN_MASK		0x00ffffff
#define SROCE_PSN_MASK		0x00ffffff
#define SROCE_MSN_MASK		0x00ffffff
#define SROCE_MULTICAST_QPN	0x00ffffff
#define SROCE_GSI_QKEY		0x80010000
#define SROCE_DEFAULT_PKEY	0xffff

/* ATOMIC WRITE (IBA A19) carries exactly 8 bytes of payload */
#define SROCE_ATOMIC_WRITE_LEN	8

/* struct sroce_bth::flags */
#define SROCE_BTH_SE		0x80	/* solicited event */
#define SROCE_BTH_MIG		0x40	/* MigReq */
#define SROCE_BTH_PAD_SHIFT	4
#define SROCE_BTH_PAD		0x30	/* PadCnt */
#define SROCE_BTH_TVER		0x0f	/* transport header version, 0 */
/* struct sroce_bth::qpn */
#define SROCE_BTH_FECN		0x80000000
#define SROCE_BTH_BECN		0x40000000
#define SROCE_BTH_RESV8A	0xff000000	/* FECN, BECN, resv6a */
/* struct sroce_bth::apsn */
#define SROCE_BTH_ACKREQ	0x80000000

/**
 * struct sroce_bth - Base Transport Header
 * @opcode: transport (3 bits) and operation (5 bits)
 * @flags: SE, MigReq, PadCnt(2), TVer(4)
 * @pkey: partition key
 * @qpn: FECN, BECN, resv6a and the destination QP (24 bits).  The whole
 *	 top byte (resv8a in the ICRC rules) is masked out of the ICRC.
 * @apsn: AckReq, resv7 and the PSN (24 bits)
 */
struct sroce_bth {
	u8 opcode;
	u8 flags;
	__be16 pkey;
	__be32 qpn;
	__be32 apsn;
} __packed;

/**
 * struct sroce_deth - Datagram Extended Transport Header (UD)
 * @qkey: queue key
 * @sqpn: reserved (8 bits) and the source QP (24 bits)
 */
struct sroce_deth {
	__be32 qkey;
	__be32 sqpn;
} __packed;

/* struct sroce_feth::bits */
#define SROCE_FETH_TYPE		0x0000000f	/* placement type */
#define SROCE_FETH_LEVEL	0x00000030	/* selectivity level */
#define SROCE_FETH_LEVEL_SHIFT	4

/* FETH placement types, a mask (IBA A19; uverbs' IB_FLUSH_GLOBAL/PERSISTENT) */
#define SROCE_FLUSH_GLOBAL	0x1	/* global visibility */
#define SROCE_FLUSH_PERSISTENT	0x2	/* persistence */
/* FETH selectivity levels */
#define SROCE_FLUSH_RANGE	0	/* the RETH's range */
#define SROCE_FLUSH_MR		1	/* the whole MR of the R_Key */

/**
 * sroce_feth_ok() - whether a FLUSH asks for something defined
 * @type: placement type; at least one of the two, nothing else
 * @level: selectivity level; range or MR (2 and 3 are reserved)
 *
 * Return: true if the FETH fields are valid.
 */
static inline bool sroce_feth_ok(u8 type, u8 level)
{
	return type && !(type & ~(SROCE_FLUSH_GLOBAL | SROCE_FLUSH_PERSISTENT)) &&
	       level <= SROCE_FLUSH_MR;
}

/**
 * struct sroce_feth - FLUSH Extended Transport Header (IBA A19)
 * @bits: placement type (bits 3-0) and selectivity level (bits 5-4)
 */
struct sroce_feth {
	__be32 bits;
} __packed;

/**
 * struct sroce_reth - RDMA Extended Transport Header
 * @va: remote virtual address
 * @rkey: remote key
 * @len: DMA length of the whole message
 */
struct sroce_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

/**
 * struct sroce_atmeth - Atomic Extended Transport Header
 * @va: remote virtual address, 8-byte aligned in memory
 * @rkey: remote key
 * @swap_add: swap value (compare and swap) or addend (fetch and add)
 * @compare: compare value (compare and swap only)
 *
 * 28 bytes: without __packed the compiler would pad it to 32.
 */
struct sroce_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

/**
 * struct sroce_aeth - ACK Extended Transport Header
 * @smsn: syndrome (8 bits) and MSN (24 bits)
 */
struct sroce_aeth {
	__be32 smsn;
} __packed;

/**
 * struct sroce_atmack - Atomic Acknowledge Extended Transport Header
 * @orig: the value at the target address before the atomic operation
 */
struct sroce_atmack {
	__be64 orig;
} __packed;

/**
 * struct sroce_immdt - Immediate Data Extended Transport Header
 * @imm: immediate data, opaque to the transport
 */
struct sroce_immdt {
	__be32 imm;
} __packed;

/**
 * struct sroce_ieth - Invalidate Extended Transport Header
 * @rkey: the R_Key the responder invalidates
 */
struct sroce_ieth {
	__be32 rkey;
} __packed;

static_assert(sizeof(struct sroce_bth) == SROCE_BTH_LEN);
static_assert(sizeof(struct sroce_deth) == SROCE_DETH_LEN);
static_assert(sizeof(struct sroce_feth) == SROCE_FETH_LEN);
static_assert(sizeof(struct sroce_reth) == SROCE_RETH_LEN);
static_assert(sizeof(struct sroce_atmeth) == SROCE_ATMETH_LEN);
static_assert(sizeof(struct sroce_aeth) == SROCE_AETH_LEN);
static_assert(sizeof(struct sroce_atmack) == SROCE_ATMACK_LEN);
static_assert(sizeof(struct sroce_immdt) == SROCE_IMMDT_LEN);
static_assert(sizeof(struct sroce_ieth) == SROCE_IETH_LEN);

/* BTH opcode = transport | operation */
enum sroce_transport {
	SROCE_TRANSPORT_RC	= 0x00,
	SROCE_TRANSPORT_UC	= 0x20,
	SROCE_TRANSPORT_RD	= 0x40,	/* not supported */
	SROCE_TRANSPORT_UD	= 0x60,
	SROCE_TRANSPORT_CNP	= 0x80,	/* RoCEv2 CNP is 0x81; not supported */
	SROCE_TRANSPORT_MASK	= 0xe0,
};

enum sroce_op {
	SROCE_OP_SEND_FIRST			= 0x00,
	SROCE_OP_SEND_MIDDLE			= 0x01,
	SROCE_OP_SEND_LAST			= 0x02,
	SROCE_OP_SEND_LAST_WITH_IMMEDIATE	= 0x03,
	SROCE_OP_SEND_ONLY			= 0x04,
	SROCE_OP_SEND_ONLY_WITH_IMMEDIATE	= 0x05,
	SROCE_OP_RDMA_WRITE_FIRST		= 0x06,
	SROCE_OP_RDMA_WRITE_MIDDLE		= 0x07,
	SROCE_OP_RDMA_WRITE_LAST		= 0x08,
	SROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE	= 0x09,
	SROCE_OP_RDMA_WRITE_ONLY		= 0x0a,
	SROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE	= 0x0b,
	SROCE_OP_RDMA_READ_REQUEST		= 0x0c,
	SROCE_OP_RDMA_READ_RESPONSE_FIRST	= 0x0d,
	SROCE_OP_RDMA_READ_RESPONSE_MIDDLE	= 0x0e,
	SROCE_OP_RDMA_READ_RESPONSE_LAST	= 0x0f,
	SROCE_OP_RDMA_READ_RESPONSE_ONLY	= 0x10,
	SROCE_OP_ACKNOWLEDGE			= 0x11,
	SROCE_OP_ATOMIC_ACKNOWLEDGE		= 0x12,
	SROCE_OP_COMPARE_SWAP			= 0x13,
	SROCE_OP_FETCH_ADD			= 0x14,
	SROCE_OP_SEND_LAST_WITH_INVALIDATE	= 0x16,
	SROCE_OP_SEND_ONLY_WITH_INVALIDATE	= 0x17,
	SROCE_OP_FLUSH				= 0x1c,
	SROCE_OP_ATOMIC_WRITE			= 0x1d,
	SROCE_OP_MASK				= 0x1f,
};

/* A full BTH opcode, e.g. SROCE_OPCODE(RC, SEND_ONLY) == 0x04 */
#define SROCE_OPCODE(tr, op)	(SROCE_TRANSPORT_##tr | SROCE_OP_##op)

/*
 * struct sroce_opcode_info::flags.  The low byte says which extension
 * headers follow the BTH; the rest says what the packet means.
 */
enum sroce_opcode_flags {
	/* extension headers present */
	SROCE_HDR_RETH		= BIT(0),
	SROCE_HDR_AETH		= BIT(1),
	SROCE_HDR_ATMETH	= BIT(2),
	SROCE_HDR_ATMACK	= BIT(3),
	SROCE_HDR_IMMDT		= BIT(4),
	SROCE_HDR_IETH		= BIT(5),
	SROCE_HDR_DETH		= BIT(6),
	SROCE_HDR_FETH		= BIT(7),
	SROCE_HDR_MASK		= 0xff,

	/* direction: sent by the requester or by the responder */
	SROCE_F_REQ		= BIT(8),
	SROCE_F_RESP		= BIT(9),

	/* position in the message; ONLY is FIRST | LAST */
	SROCE_F_FIRST		= BIT(10),
	SROCE_F_MIDDLE		= BIT(11),
	SROCE_F_LAST		= BIT(12),
	SROCE_F_ONLY		= SROCE_F_FIRST | SROCE_F_LAST,

	/* the opcode may carry payload */
	SROCE_F_PAYLOAD		= BIT(13),

	/* the operation: exactly one of these is set */
	SROCE_F_SEND		= BIT(14),
	SROCE_F_WRITE		= BIT(15),
	SROCE_F_READ_REQ	= BIT(16),
	SROCE_F_ATOMIC		= BIT(17),	/* compare-swap, fetch-add */
	SROCE_F_READ_RESP	= BIT(18),
	SROCE_F_ACK		= BIT(19),
	SROCE_F_ATOMIC_ACK	= BIT(20),
	SROCE_F_FLUSH		= BIT(21),
	SROCE_F_ATOMIC_WRITE	= BIT(22),

	/* the transport (also the top 3 bits of the opcode) */
	SROCE_F_RC		= BIT(24),
	SROCE_F_UC		= BIT(25),
	SROCE_F_UD		= BIT(26),
};

/**
 * struct sroce_opcode_info - what the opcode table knows about an opcode
 * @name: e.g. "RC_SEND_FIRST", for debugging and tracing
 * @flags: SROCE_HDR_* and SROCE_F_* bits
 * @hdr_len: bytes of BTH plus extension headers, i.e. the payload offset
 */
struct sroce_opcode_info {
	const char *name;
	u32 flags;
	u8 hdr_len;
};

const struct sroce_opcode_info *sroce_opcode(u8 opcode);

/**
 * struct sroce_pkt - the transport headers of a packet, decoded
 * @opcode: BTH opcode
 * @se: BTH solicited event
 * @mig: BTH MigReq
 * @fecn: BTH FECN (forward congestion notification)
 * @becn: BTH BECN (backward congestion notification)
 * @ack_req: BTH AckReq
 * @pad: BTH PadCnt, 0-3 bytes after the payload (decode only)
 * @pkey: BTH partition key
 * @dqpn: BTH destination QP, 24 bits
 * @psn: BTH packet sequence number, 24 bits
 * @flags: the opcode's struct sroce_opcode_info flags
 * @hdr_len: bytes of BTH plus extension headers; payload starts here
 * @payload_len: bytes of payload, excluding pad and ICRC
 * @va: RETH or AtomicETH virtual address
 * @rkey: RETH or AtomicETH R_Key
 * @dma_len: RETH DMA length
 * @swap_add: AtomicETH swap or add data
 * @compare: AtomicETH compare data
 * @syndrome: AETH syndrome, see sroce_aeth_type()
 * @msn: AETH message sequence number, 24 bits
 * @atomic_orig: AtomicAckETH original remote data
 * @imm: ImmDt, kept in wire (big-endian) order as in struct ib_wc
 * @inv_rkey: IETH R_Key to invalidate
 * @qkey: DETH Q_Key
 * @sqpn: DETH source QP, 24 bits
 * @flush_type: FETH placement type
 * @flush_level: FETH selectivity level
 *
 * Fields of headers the opcode does not carry are zero after
 * sroce_pkt_parse() and are ignored by sroce_pkt_build().
 */
struct sroce_pkt {
	u8 opcode;
	bool se;
	bool mig;
	bool fecn;
	bool becn;
	bool ack_req;
	u8 pad;
	u16 pkey;
	u32 dqpn;
	u32 psn;
	u32 flags;
	u16 hdr_len;
	u32 payload_len;
	u64 va;
	u32 rkey;
	u32 dma_len;
	u64 swap_add;
	u64 compare;
	u8 syndrome;
	u32 msn;
	u64 atomic_orig;
	__be32 imm;
	u32 inv_rkey;
	u32 qkey;
	u32 sqpn;
	u8 flush_type;
	u8 flush_level;
};

int sroce_pkt_parse(const void *bth, unsigned int len, struct sroce_pkt *pkt);
unsigned int sroce_pkt_build(void *buf, const struct sroce_pkt *pkt);

/**
 * sroce_pad() - pad bytes after a payload of @len bytes
 * @len: payload length
 *
 * Return: 0-3, so that payload plus pad is a multiple of 4.
 */
static inline u8 sroce_pad(u32 len)
{
	return -len & 3;
}

/**
 * sroce_psn_cmp() - compare two 24-bit PSNs across the wrap
 * @a: a PSN
 * @b: another PSN
 *
 * Return: <0, 0 or >0 when @a is before, equal to or after @b, treating
 * the 2^24 PSN space as a circle split in halves.
 */
static inline int sroce_psn_cmp(u32 a, u32 b)
{
	return (s32)((a - b) << 8);
}

/**
 * sroce_psn_add() - advance a PSN
 * @psn: a PSN
 * @n: how far to advance it
 *
 * Return: (@psn + @n) modulo 2^24.
 */
static inline u32 sroce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SROCE_PSN_MASK;
}

/*
 * AETH syndrome: bit 7 reserved, bits 6-5 the type, bits 4-0 the value
 * (credit count, RNR timer or NAK code).
 */
enum sroce_aeth_type {
	SROCE_AETH_ACK		= 0,
	SROCE_AETH_RNR_NAK	= 1,
	SROCE_AETH_RESERVED	= 2,
	SROCE_AETH_NAK		= 3,
};

#define SROCE_AETH_TYPE_SHIFT	5
#define SROCE_AETH_VALUE	0x1f
#define SROCE_AETH_CREDITS_INVALID 0x1f	/* end-to-end credits unused */

/* Complete NAK syndromes */
enum sroce_nak_syndrome {
	SROCE_NAK_PSN_SEQ_ERR		= 0x60,
	SROCE_NAK_INVALID_REQ		= 0x61,
	SROCE_NAK_REMOTE_ACCESS_ERR	= 0x62,
	SROCE_NAK_REMOTE_OP_ERR		= 0x63,
	SROCE_NAK_INVALID_RD_REQ	= 0x64,
};

/**
 * sroce_aeth_ack() - the syndrome of an ACK
 * @credits: 5-bit end-to-end credit code, SROCE_AETH_CREDITS_INVALID if
 *	     the responder does not use credits
 *
 * Return: the AETH syndrome.
 */
static inline u8 sroce_aeth_ack(u8 credits)
{
	return SROCE_AETH_ACK << SROCE_AETH_TYPE_SHIFT |
	       (credits & SROCE_AETH_VALUE);
}

/**
 * sroce_aeth_rnr_nak() - the syndrome of an RNR NAK
 * @timer: 5-bit IBTA RNR timer code (enum ib_rnr_timeout)
 *
 * Return: the AETH syndrome.
 */
static inline u8 sroce_aeth_rnr_nak(u8 timer)
{
	return SROCE_AETH_RNR_NAK << SROCE_AETH_TYPE_SHIFT |
	       (timer & SROCE_AETH_VALUE);
}

/**
 * sroce_aeth_type() - the type of an AETH syndrome
 * @syndrome: AETH syndrome
 *
 * Return: ACK, RNR NAK, NAK or reserved.
 */
static inline enum sroce_aeth_type sroce_aeth_type(u8 syndrome)
{
	return (syndrome >> SROCE_AETH_TYPE_SHIFT) & 3;
}

/**
 * sroce_aeth_value() - the value field of an AETH syndrome
 * @syndrome: AETH syndrome
 *
 * Return: the credit code (ACK), timer code (RNR NAK) or NAK code (NAK,
 * 0 for PSN sequence error .. 4 for invalid RD request).
 */
static inline u8 sroce_aeth_value(u8 syndrome)
{
	return syndrome & SROCE_AETH_VALUE;
}

#endif /* SROCE_WIRE_H */
