/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * sroce's raw resource-tracking entries: the bytes of
 * RDMA_NLDEV_ATTR_RES_RAW that "rdma res show qp|cq|mr -r" (and srq on
 * kernels whose core dumps SRQs raw, 6.7 on) prints as "data", one
 * entry per object.  Documentation/sroce.rst, "Seeing into the device",
 * has an example and what each field means; the driver attributes of
 * "-dd" show most of them by name.
 *
 * Layout rules, for readers:
 *  - every integer is little-endian; there is no implicit padding;
 *  - an entry starts with struct sroce_raw_hdr: @kind says which struct
 *    follows, @size how many bytes the entry has, header included;
 *  - a later @version only appends fields (and grows @size): read the
 *    first min(@size, sizeof(struct)) bytes, and treat fields past
 *    @size as absent.  A field's meaning never changes within a
 *    version; if one must, @version goes up and the struct is new;
 *  - no entry holds a kernel address.  Values are read without the
 *    object's locks while it runs (each once), so one entry may mix two
 *    moments, as the driver attributes do.
 */
#ifndef _UAPI_RDMA_SROCE_RESTRACK_H
#define _UAPI_RDMA_SROCE_RESTRACK_H

#include <linux/types.h>

#define SROCE_RAW_VERSION 1

enum sroce_raw_kind {
	SROCE_RAW_QP = 1,
	SROCE_RAW_CQ = 2,
	SROCE_RAW_MR = 3,
	SROCE_RAW_SRQ = 4,
};

/**
 * struct sroce_raw_hdr - the start of every raw entry (8 bytes)
 * @version: SROCE_RAW_VERSION of the layout that follows
 * @size: bytes in the entry, this header included
 * @kind: enum sroce_raw_kind
 * @reserved: zero
 */
struct sroce_raw_hdr {
	__le16 version;
	__le16 size;
	__u8 kind;
	__u8 reserved[3];
};

/* struct sroce_raw_qp.flags: one bit per enum sroce_qp_flag (qp.h) */
#define SROCE_RAW_QPF_DEAD		(1ULL << 0)
#define SROCE_RAW_QPF_RETRANS		(1ULL << 1)
#define SROCE_RAW_QPF_RNR		(1ULL << 2)
#define SROCE_RAW_QPF_FLUSH		(1ULL << 3)
#define SROCE_RAW_QPF_SQD_NOTIFY	(1ULL << 4)
#define SROCE_RAW_QPF_TX_FULL		(1ULL << 5)
#define SROCE_RAW_QPF_RESP_REORDER	(1ULL << 6)
#define SROCE_RAW_QPF_COMP_REORDER	(1ULL << 7)
#define SROCE_RAW_QPF_RETIRE		(1ULL << 8)

/**
 * struct sroce_raw_qp - a QP (SROCE_RAW_QP, 128 bytes in version 1)
 * @hdr: the header
 * @qpn: the QP number (lqpn)
 * @state: enum ib_qp_state (0 RESET .. 6 ERR)
 * @type: enum ib_qp_type (2 RC, 3 UC, 4 UD, 1 GSI)
 * @rnr_wait: sending stopped until the RNR timer fires
 * @nak_sent: responder: a sequence NAK is out, waiting for its PSN
 * @req_psn: requester: the next PSN it sends
 * @req_psn_high: requester: one past the newest PSN ever sent
 * @req_ssn: requester: the next send sequence number
 * @req_rd_atomic: READs and atomics outstanding
 * @retransmits: times the requester went back to resend
 * @cwnd: RC: packets the requester may have in flight
 * @cwnd_ssthresh: RC: where the window stops doubling
 * @sq_head: send WQEs fetched from the ring (free-running index)
 * @sq_next: the WQE being sent or next to send
 * @sq_tail: the oldest WQE not yet completed (@sq_head - @sq_tail are
 *	outstanding, @sq_head - @sq_next not sent in full)
 * @sq_size: WQE copies the QP keeps (a power of two); @sq_max_wr the
 *	send queue's capacity, @rq_max_wr the receive queue's (0 with an SRQ)
 * @sq_max_wr: see @sq_size
 * @rq_max_wr: see @sq_size
 * @comp_psn: completer: the oldest PSN not acknowledged
 * @retry_left: retries left before RETRY_EXC_ERR
 * @rnr_left: RNR retries left before RNR_RETRY_EXC_ERR (7: forever)
 * @seq_retry: a go-back-N for a sequence NAK is under way
 * @resp_in_msg: responder: inside a multi-packet SEND or WRITE
 * @resp_psn: responder: the next PSN it expects
 * @resp_msn: responder: the MSN of the last message completed
 * @rx_queue: packets received, waiting for the QP's engine
 * @held_requests: requests past a PSN gap, held for it (responder)
 * @held_responses: responses past a PSN gap, held for it (completer)
 * @flags: SROCE_RAW_QPF_*, the engine's pending work
 * @dest_qpn: RC/UC: the peer's QP
 * @mtu: the path MTU in bytes
 * @sq_psn: the first PSN it sent (modify_qp)
 * @rq_psn: the first PSN it expected (modify_qp)
 * @timeout: local ACK timeout, 4.096 us * 2^@timeout, 0: none
 * @retry_cnt: retries on timeout or sequence NAK (modify_qp)
 * @rnr_retry: retries after RNR NAKs, 7: forever (modify_qp)
 * @min_rnr_timer: the RNR timer code it sends in its RNR NAKs
 * @max_rd_atomic: READs and atomics it may have outstanding
 * @max_dest_rd_atomic: ... the peer may have outstanding with it
 * @reserved: zero
 */
struct sroce_raw_qp {
	struct sroce_raw_hdr hdr;
	__le32 qpn;
	__u8 state;
	__u8 type;
	__u8 rnr_wait;
	__u8 nak_sent;
	__le32 req_psn;
	__le32 req_psn_high;
	__le32 req_ssn;
	__le32 req_rd_atomic;
	__le32 retransmits;
	__le32 cwnd;
	__le32 cwnd_ssthresh;
	__le32 sq_head;
	__le32 sq_next;
	__le32 sq_tail;
	__le32 sq_size;
	__le32 sq_max_wr;
	__le32 rq_max_wr;
	__le32 comp_psn;
	__u8 retry_left;
	__u8 rnr_left;
	__u8 seq_retry;
	__u8 resp_in_msg;
	__le32 resp_psn;
	__le32 resp_msn;
	__le32 rx_queue;
	__le32 held_requests;
	__le32 held_responses;
	__le64 flags;
	__le32 dest_qpn;
	__le32 mtu;
	__le32 sq_psn;
	__le32 rq_psn;
	__u8 timeout;
	__u8 retry_cnt;
	__u8 rnr_retry;
	__u8 min_rnr_timer;
	__u8 max_rd_atomic;
	__u8 max_dest_rd_atomic;
	__u8 reserved[2];
};

/**
 * struct sroce_raw_cq - a CQ (SROCE_RAW_CQ, 36 bytes in version 1)
 * @hdr: the header
 * @cqn: the core's CQ number (cqn)
 * @size: completions it holds (slots - 1; a power of two minus one)
 * @producer: the driver's producer index (free-running; & @size is
 *	the slot)
 * @consumer: the consumer's index, as the ring shows it
 * @used: completions not yet polled, (@producer - @consumer) & @size
 * @elem_size: bytes of one completion in the ring
 * @armed: 2: for the next completion, 1: for a solicited one, 0: not
 * @overflowed: a completion was lost to a full ring
 * @user: the ring is mapped by a user process
 * @reserved: zero
 */
struct sroce_raw_cq {
	struct sroce_raw_hdr hdr;
	__le32 cqn;
	__le32 size;
	__le32 producer;
	__le32 consumer;
	__le32 used;
	__le32 elem_size;
	__u8 armed;
	__u8 overflowed;
	__u8 user;
	__u8 reserved;
};

/* struct sroce_raw_mr.type */
enum sroce_raw_mr_type {
	SROCE_RAW_MR_OTHER = 0,
	SROCE_RAW_MR_DMA = 1,
	SROCE_RAW_MR_USER = 2,		/* pinned user memory */
	SROCE_RAW_MR_FAST_REG = 3,
	SROCE_RAW_MR_ODP = 4,		/* on-demand paging */
	SROCE_RAW_MR_DMABUF = 5,
};

/**
 * struct sroce_raw_mr - an MR (SROCE_RAW_MR, 64 bytes in version 1)
 * @hdr: the header
 * @mrn: the core's MR number (mrn)
 * @key: its lkey, equal to its rkey
 * @type: enum sroce_raw_mr_type
 * @valid: 1: valid; 0: free (a fast-reg MR without a registration)
 * @reserved: zero
 * @access: IB_ACCESS_* granted
 * @iova: the first address of the MR (0 for a DMA MR)
 * @length: its length in bytes
 * @pages: user: pages pinned; ODP: pages mapped now; fast-reg: blocks of
 *	the current registration
 * @max_pages: user and ODP: pages the MR spans; fast-reg: max_num_sg
 * @page_size: bytes of a page or block (0 where it has none)
 * @windows: memory windows bound to it
 * @odp_faults: ODP: data-path faults done for it
 */
struct sroce_raw_mr {
	struct sroce_raw_hdr hdr;
	__le32 mrn;
	__le32 key;
	__u8 type;
	__u8 valid;
	__u8 reserved[2];
	__le32 access;
	__le64 iova;
	__le64 length;
	__le32 pages;
	__le32 max_pages;
	__le32 page_size;
	__le32 windows;
	__le64 odp_faults;
};

/**
 * struct sroce_raw_srq - an SRQ (SROCE_RAW_SRQ, 40 bytes in version 1)
 * @hdr: the header
 * @srq_num: its number (srqn)
 * @size: receive WQEs it holds (slots - 1)
 * @producer: the poster's producer index, as the ring shows it
 * @consumer: the driver's consumer index (free-running)
 * @posted: receive WQEs posted and not yet taken
 * @limit: the SRQ limit armed, 0 if none
 * @max_sge: scatter entries per WQE
 * @user: the ring is mapped by a user process
 * @reserved: zero
 */
struct sroce_raw_srq {
	struct sroce_raw_hdr hdr;
	__le32 srq_num;
	__le32 size;
	__le32 producer;
	__le32 consumer;
	__le32 posted;
	__le32 limit;
	__le32 max_sge;
	__u8 user;
	__u8 reserved[3];
};

#endif /* _UAPI_RDMA_SROCE_RESTRACK_H */
