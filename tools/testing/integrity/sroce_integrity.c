// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_integrity: a data-integrity test of RC over a RoCEv2 RDMA device.
 *
 * One binary, three ways to run it:
 *
 *   sroce_integrity -l [-d DEV] [-g GID]          loopback: two QPs on one
 *                                                 device, in this process
 *   sroce_integrity -s [-d DEV] [-g GID] [-p PORT] server (the responder)
 *   sroce_integrity -c HOST [-d DEV] [-g GID]     client (runs the tests)
 *
 * The client drives everything.  It talks to the server over a TCP socket
 * with small fixed-size messages (struct msg): "create a QP connected to
 * mine", "fill / poison / check these regions of your buffer", "post these
 * receives", "give me your receive completions" and so on; the server only
 * does what it is told.  In loopback mode the same requests are served by
 * a function call instead of the socket, so both modes share every line of
 * test logic.  Both ends must run the same binary (the messages are raw
 * structs).
 *
 * Every byte that lands is checked against a position- and seed-dependent
 * pattern, and GUARD bytes around each destination region must still hold
 * the POISON written before the transfer.  Every completion is checked
 * field by field.  Output is TAP; the exit status is 0 only if all passed.
 *
 * Only the classic verbs are used (ibv_post_send, ibv_post_recv,
 * ibv_poll_cq): librxe 44's extended post/poll API has bugs.  The one
 * exception is ATOMIC_WRITE, which only the extended API posts
 * (ibv_wr_atomic_write); and FLUSH, which libibverbs 44 has no verb for,
 * is posted as an ATOMIC_WRITE rewritten in the send ring before it is
 * handed to the kernel (see post_pmem()).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))

#define DEFAULT_TCP_PORT 18515
#define KIB		1024UL
#define MIB		(1024UL * 1024UL)
#define BUF_SIZE	(MIB + 64 * KIB)	/* per end, registered once */
#define GUARD		16		/* poisoned bytes each side of a region */
#define POISON		0x5a
#define WAIT_MS		10000		/* the deadline of every wait */
#define ACCEPT_MS	30000		/* the server waits this long for a client */
#define MAX_REG		32		/* regions in one message */
#define MAX_WC		64		/* completions in one message */
#define QP_DEPTH	128
#define CQ_DEPTH	512
#define WANT_SGE	8
#define WANT_INLINE	512
#define WANT_RD_ATOMIC	16
#define BOGUS_QPN	0xfedcba
#define GIVE_UP		3		/* cases in a row that time out */

/* Fixed places in the buffers, away from the data regions (< 1 MiB + 9 KiB). */
#define SPARE_OFF	(BUF_SIZE - 4 * KIB)	/* a receive WRITE_WITH_IMM must not touch */
#define ATOMIC_LOFF	(BUF_SIZE - 3 * KIB)	/* local results of atomics */
#define MW_OFF		(512 * KIB)		/* what the memory window covers */
#define MW_LEN		(8 * KIB)

/*
 * IBA A19 (memory placement extensions) as newer libibverbs and the
 * kernel's uverbs ABI define them; libibverbs 44 has ATOMIC_WRITE only.
 */
#define WR_FLUSH		14		/* IBV_WR_FLUSH */
#define WC_FLUSH		8		/* IBV_WC_FLUSH */
#define ACCESS_FLUSH_GLOBAL	(1 << 8)	/* IBV_ACCESS_FLUSH_GLOBAL */
#define ACCESS_FLUSH_PERSISTENT	(1 << 9)	/* IBV_ACCESS_FLUSH_PERSISTENT */
#define DEV_FLUSH_GLOBAL	(1ULL << 38)	/* IB_UVERBS_DEVICE_FLUSH_GLOBAL */
#define DEV_ATOMIC_WRITE	(1ULL << 40)	/* IB_UVERBS_DEVICE_ATOMIC_WRITE */
#define FLUSH_GLOBAL		1		/* placement types */
#define FLUSH_PERSISTENT	2
#define FLUSH_RANGE		0		/* selectivity levels */
#define FLUSH_MR		1
#define PMEM_ATOMIC_WRITE	1		/* struct side/hello::pmem: device */
#define PMEM_FLUSH		2		/* device */
#define PMEM_FLUSH_MR		4		/* the buffer's MR grants it */

enum { PASS, FAIL, SKIP };

/* Test groups, for -t. */
enum {
	G_BASIC = 1 << 0,
	G_SGE = 1 << 1,
	G_INLINE = 1 << 2,
	G_ATOMIC = 1 << 3,
	G_BURST = 1 << 4,
	G_INV = 1 << 5,
	G_ERROR = 1 << 6,
	G_ALL = (1 << 7) - 1,
};

static const struct {
	const char *name;
	unsigned int bit;
} group_names[] = {
	{ "basic", G_BASIC }, { "sge", G_SGE }, { "inline", G_INLINE },
	{ "atomic", G_ATOMIC }, { "burst", G_BURST }, { "inv", G_INV },
	{ "error", G_ERROR }, { "all", G_ALL },
};

struct opts {
	const char *dev;
	const char *host;
	int ib_port;
	int gid_idx;
	int tcp_port;
	bool server;
	bool loopback;
	bool quick;
	bool verbose;
	bool self_check;
	uint32_t seed;
	unsigned int groups;
	uint64_t soak_bytes;	/* --soak: this many bytes instead of the groups */
	uint64_t soak_step;	/* a progress line per this many bytes */
	unsigned int soak_ops;	/* bit i: soak_name[i] */
	int qp_timeout;		/* with --soak: the QPs' timeout, if >= 0 */
	int rxe;		/* --rxe: the local device is rdma_rxe (1), is
				 * not (0), or find out (-1) */
	int wait_ms;		/* the deadline of a completion wait */
};

/* ------------------------------------------------------------ wire ---- */

/* A piece of a buffer: bytes [off, off + len) carry stream bytes [pos, ...). */
struct region {
	uint64_t off;
	uint64_t len;
	uint64_t pos;
};

/* A work completion as it travels. */
struct wwc {
	uint64_t wr_id;
	uint32_t status;
	uint32_t opcode;
	uint32_t byte_len;
	uint32_t flags;
	uint32_t imm;		/* imm_data (raw, network order) or invalidated_rkey */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t vendor_err;
};

struct qp_info {
	uint32_t qpn;
	uint32_t psn;
	uint32_t mtu;		/* enum ibv_mtu */
	uint32_t pad;
	uint8_t gid[16];
};

struct qp_params {
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
};

struct hello {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
	uint32_t max_recv_sge;
	uint32_t mtu;
	uint32_t mw_ok;
	uint32_t atomic_ok;
	uint32_t pmem;		/* PMEM_*: ATOMIC_WRITE, FLUSH to the buffer */
	uint32_t rxe;		/* the server's device is rdma_rxe */
	uint8_t gid[16];
};

enum {
	CMD_HELLO = 1,
	CMD_QP_CREATE,	/* params, qpi: the client's QP; reply qpi: ours */
	CMD_QP_DESTROY,
	CMD_FILL,	/* reg[nreg] with pattern seed */
	CMD_POISON,	/* reg[nreg] and their guards */
	CMD_CHECK,	/* reg[nreg]: pattern below stream pos limit, poison above */
	CMD_SET64,	/* *(u64 *)(buf + reg[0].off) = val */
	CMD_GET64,
	CMD_POST_RECV,	/* count = 0: one WR with reg[nreg]; 1: one WR per region */
	CMD_POLL_RECV,	/* count completions; reply status = how many came */
	CMD_BIND_MW,	/* type 2 MW over reg[0]; reply val = rkey */
	CMD_QUIT,
	CMD_MW,		/* count = MW_OP_*: the memory window cases (serve_mw) */
};

/*
 * CMD_MW: count = the operation; wr_id = the window (MW_T*) |
 * MW_MR_* << 8; limit = the window's access flags; val = an rkey (in:
 * MW_OP_INV; out: the window's rkey after MW_OP_BIND); wc[0] = the bind's
 * or the LOCAL_INV's completion.
 */
enum { MW_OP_BIND = 1, MW_OP_INV, MW_OP_DEALLOC, MW_OP_DEREG_BUSY };
enum { MW_MR_MAIN, MW_MR_NOBIND, MW_MR_SMALL };
/*
 * The server's windows: type 1 (bound by ibv_bind_mw()), type 2, the
 * type 1 window bound by an IBV_WR_BIND_MW work request as a raw user may
 * (librxe's ibv_bind_mw() refuses some binds itself), and a type 2 window
 * kept when the connection goes (its QP destroyed under it).
 */
enum { MW_T1 = 1, MW_T2, MW_T1_WR, MW_T2_KEPT };

struct msg {
	uint32_t cmd;
	int32_t status;		/* reply: < 0 on error (err says why) */
	uint32_t seed;
	uint32_t nreg;
	uint32_t count;
	uint32_t pad;
	uint64_t limit;
	uint64_t val;
	uint64_t wr_id;
	struct qp_params params;
	struct qp_info qpi;
	struct hello hello;
	struct region reg[MAX_REG];
	struct wwc wc[MAX_WC];
	char err[256];
};

/* ---------------------------------------------------------- helpers ---- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* The byte at stream position pos of the pattern with this seed. */
static inline uint8_t pat(uint32_t seed, uint64_t pos)
{
	uint32_t x = ((uint32_t)pos + seed) * 0x9e3779b1U;

	x ^= (uint32_t)(pos >> 32) * 0x85ebca6bU;
	x ^= x >> 15;
	return (uint8_t)(x ^ (x >> 8));
}

static const char *wc_opcode_str(uint32_t op)
{
	switch (op) {
	case IBV_WC_SEND:		return "SEND";
	case IBV_WC_RDMA_WRITE:		return "RDMA_WRITE";
	case IBV_WC_RDMA_READ:		return "RDMA_READ";
	case IBV_WC_COMP_SWAP:		return "COMP_SWAP";
	case IBV_WC_FETCH_ADD:		return "FETCH_ADD";
	case IBV_WC_BIND_MW:		return "BIND_MW";
	case IBV_WC_LOCAL_INV:		return "LOCAL_INV";
	case IBV_WC_RECV:		return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM:	return "RECV_RDMA_WITH_IMM";
	default:			return "?";
	}
}

static void wc_to_wire(const struct ibv_wc *wc, struct wwc *w)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = wc->wr_id;
	w->status = wc->status;
	w->opcode = wc->opcode;
	w->byte_len = wc->byte_len;
	w->flags = wc->wc_flags;
	w->imm = wc->imm_data;
	w->qp_num = wc->qp_num;
	w->src_qp = wc->src_qp;
	w->vendor_err = wc->vendor_err;
}

/*
 * Poll cq until n completions came or ms passed; returns how many came
 * (they go to out[]), or -1 if ibv_poll_cq failed.  Spins a little, then
 * sleeps between polls: the machine may be small and emulated.
 */
static int poll_wcs(struct ibv_cq *cq, struct wwc *out, int n, int ms)
{
	uint64_t deadline = now_ms() + ms;
	struct ibv_wc wc[16];
	int got = 0, idle = 0, k, i;

	while (got < n) {
		k = ibv_poll_cq(cq, MIN(n - got, (int)ARRAY_SIZE(wc)), wc);
		if (k < 0)
			return -1;
		for (i = 0; i < k; i++)
			wc_to_wire(&wc[i], &out[got++]);
		if (k > 0) {
			idle = 0;
			continue;
		}
		if (now_ms() > deadline)
			break;
		if (++idle < 200)
			sched_yield();
		else
			usleep(50);
	}
	return got;
}

/* ----------------------------------------------------------- regions ---- */

/*
 * Split total bytes into up to n regions with sizes in the proportions of
 * w[], from buffer offset base on, each followed by a gap wider than
 * GUARD.  Zero bytes give one empty region.  Returns the region count.
 */
static int layout(struct region *r, uint64_t base, uint64_t total, int n,
		  const unsigned int *w)
{
	uint64_t pos = 0, off = base, len, wsum = 0;
	int i;

	if (total == 0) {
		r[0] = (struct region){ base, 0, 0 };
		return 1;
	}
	if ((uint64_t)n > total)
		n = (int)total;
	for (i = 0; i < n; i++)
		wsum += w[i];
	for (i = 0; i < n; i++) {
		if (i == n - 1) {
			len = total - pos;
		} else {
			len = MAX(1, total * w[i] / wsum);
			len = MIN(len, total - pos - (uint64_t)(n - 1 - i));
		}
		r[i] = (struct region){ off, len, pos };
		pos += len;
		off += len + GUARD + 2 * i + 3;
	}
	return n;
}

static const unsigned int w_send[] = { 3, 5, 7, 11, 2, 13, 4, 9 };
static const unsigned int w_recv[] = { 7, 2, 5, 3, 11, 6, 1, 8 };

static bool regions_fit(const struct region *r, int n, uint64_t size)
{
	int i;

	for (i = 0; i < n; i++)
		if (r[i].off < GUARD || r[i].len > size ||
		    r[i].off + r[i].len + GUARD > size)
			return false;
	return true;
}

static void region_fill(uint8_t *buf, const struct region *r, int n, uint32_t seed)
{
	uint64_t i;
	int k;

	for (k = 0; k < n; k++)
		for (i = 0; i < r[k].len; i++)
			buf[r[k].off + i] = pat(seed, r[k].pos + i);
}

static void region_poison(uint8_t *buf, const struct region *r, int n)
{
	int k;

	for (k = 0; k < n; k++)
		memset(buf + r[k].off - GUARD, POISON, r[k].len + 2 * GUARD);
}

/* Count bytes in [off, off + len) that are not POISON; note the first. */
static uint64_t check_poison(const uint8_t *buf, uint64_t off, uint64_t len,
			     uint64_t *first)
{
	uint64_t i, bad = 0;

	for (i = 0; i < len; i++) {
		if (buf[off + i] == POISON)
			continue;
		if (!bad++)
			*first = off + i;
	}
	return bad;
}

/* For -C: spoil one byte of what region_check() is about to look at. */
static void spoil(uint8_t *buf, const struct region *r, int n)
{
	if (n > 0)
		buf[r[0].len ? r[0].off + r[0].len / 2 : r[0].off - 1] ^= 0x10;
}

/*
 * Check regions: stream bytes below limit must match the pattern, the
 * rest of each region and its guards must still be POISON.  Returns the
 * number of bad bytes; err describes the first.
 */
static uint64_t region_check(const uint8_t *buf, const struct region *r, int n,
			     uint32_t seed, uint64_t limit, char *err, size_t errlen)
{
	uint64_t i, bad = 0, nb, first = 0, dummy;
	uint8_t want;
	int k;

	err[0] = 0;
	for (k = 0; k < n; k++) {
		nb = check_poison(buf, r[k].off - GUARD, GUARD, &first);
		nb += check_poison(buf, r[k].off + r[k].len, GUARD, nb ? &dummy : &first);
		if (nb && !bad)
			snprintf(err, errlen, "region %d (off %" PRIu64 " len %" PRIu64
				 "): guard byte at off %" PRIu64 " overwritten: 0x%02x",
				 k, r[k].off, r[k].len, first, buf[first]);
		bad += nb;
		for (i = 0; i < r[k].len; i++) {
			want = r[k].pos + i < limit ? pat(seed, r[k].pos + i) : POISON;
			if (buf[r[k].off + i] == want)
				continue;
			if (!bad++)
				snprintf(err, errlen, "region %d (off %" PRIu64 " len %" PRIu64
					 "): byte %" PRIu64 " (stream pos %" PRIu64
					 "): want 0x%02x got 0x%02x%s", k, r[k].off,
					 r[k].len, i, r[k].pos + i, want,
					 buf[r[k].off + i],
					 want == POISON ? " (written past the message)" : "");
		}
	}
	if (bad) {
		size_t l = strlen(err);

		snprintf(err + l, errlen - l, "; %" PRIu64 " bad bytes in all", bad);
	}
	return bad;
}

/* ----------------------------------------------------------- devices ---- */

/* What one end has for its whole life: device, PD, buffer, MR. */
struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	union ibv_gid gid;
	uint8_t *buf;
	struct ibv_mr *mr;
	bool mw_ok;
	bool rxe;		/* the device is rdma_rxe (side_is_rxe()) */
	unsigned int pmem;	/* PMEM_*: the device's, and the MR's flush access */
	int ib_port;
	int gid_idx;
};

/* One RC QP and its CQs; made afresh whenever a test needs a clean slate. */
struct conn {
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;	/* made with ATOMIC_WRITE among its send ops */
	uint32_t psn;
	uint32_t max_inline;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
};

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list) {
		perror("ibv_get_device_list");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (name && strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			fprintf(stderr, "cannot open %s: %s\n",
				ibv_get_device_name(list[i]), strerror(errno));
		break;
	}
	if (i == n)
		fprintf(stderr, "no RDMA device %s\n", name ? name : "at all");
	ibv_free_device_list(list);
	return ctx;
}

/* PMEM_* the device reports (ibv_query_device_ex). */
static unsigned int side_pmem_caps(struct side *s)
{
	struct ibv_device_attr_ex ex;
	unsigned int pmem = 0;

	memset(&ex, 0, sizeof(ex));
	if (ibv_query_device_ex(s->ctx, NULL, &ex))
		return 0;
	if (ex.device_cap_flags_ex & DEV_ATOMIC_WRITE)
		pmem |= PMEM_ATOMIC_WRITE;
	if (ex.device_cap_flags_ex & DEV_FLUSH_GLOBAL)
		pmem |= PMEM_FLUSH;
	return pmem;
}

/*
 * Is the device rdma_rxe, whose known deviations some checks accept?
 * --rxe says so; else rxe's own sysfs attribute "parent" (rxe_verbs.c,
 * rxe_attr_group), which sroce does not have, with rxe's vendor ID
 * (RXE_VENDOR_ID, rxe_param.h); not the name, which "rdma link add" sets.
 */
static bool side_is_rxe(const struct side *s, const struct opts *o)
{
	char path[IBV_SYSFS_PATH_MAX + sizeof("/parent")];

	if (o->rxe >= 0)
		return o->rxe;
	snprintf(path, sizeof(path), "%s/parent", s->ctx->device->ibdev_path);
	return s->dev.vendor_id == 0xffffff && !access(path, F_OK);
}

static int side_open(struct side *s, const struct opts *o)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	void *buf;

	memset(s, 0, sizeof(*s));
	s->ib_port = o->ib_port;
	s->gid_idx = o->gid_idx;
	s->ctx = open_device(o->dev);
	if (!s->ctx)
		return -1;
	if (ibv_query_device(s->ctx, &s->dev) ||
	    ibv_query_port(s->ctx, s->ib_port, &s->port) ||
	    ibv_query_gid(s->ctx, s->ib_port, s->gid_idx, &s->gid)) {
		perror("query device/port/gid");
		return -1;
	}
	if (s->port.state != IBV_PORT_ACTIVE)
		fprintf(stderr, "warning: port %d is not active\n", s->ib_port);
	s->rxe = side_is_rxe(s, o);
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd || posix_memalign(&buf, 4096, BUF_SIZE)) {
		perror("ibv_alloc_pd/posix_memalign");
		return -1;
	}
	s->buf = buf;
	memset(s->buf, POISON, BUF_SIZE);
	s->pmem = side_pmem_caps(s);
	/* 6.1's core refuses the flush access bits whatever the device says. */
	if (s->pmem & PMEM_FLUSH)
		s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE,
				   access | IBV_ACCESS_MW_BIND | ACCESS_FLUSH_GLOBAL);
	if (s->mr)
		s->pmem |= PMEM_FLUSH_MR;
	else
		s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE, access | IBV_ACCESS_MW_BIND);
	s->mw_ok = s->mr != NULL;
	if (!s->mr)
		s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE, access);
	if (!s->mr) {
		perror("ibv_reg_mr");
		return -1;
	}
	return 0;
}

static void side_close(struct side *s)
{
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->ctx)
		ibv_close_device(s->ctx);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

static void conn_free(struct conn *q)
{
	if (!q)
		return;
	if (q->qp)
		ibv_destroy_qp(q->qp);
	if (q->scq)
		ibv_destroy_cq(q->scq);
	if (q->rcq)
		ibv_destroy_cq(q->rcq);
	free(q);
}

/*
 * With ATOMIC_WRITE among its send operations, if the device has it; the
 * classic ibv_post_send() works on such a QP too.
 */
static struct ibv_qp *create_rc_qp_ex(struct side *s, struct conn *q,
				      struct ibv_qp_init_attr *a)
{
	struct ibv_qp_init_attr_ex ax = {
		.send_cq = a->send_cq, .recv_cq = a->recv_cq, .qp_type = a->qp_type,
		.sq_sig_all = a->sq_sig_all, .cap = a->cap, .pd = s->pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
			IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
			IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
			IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	struct ibv_qp *qp;

	if (!(s->pmem & PMEM_ATOMIC_WRITE))
		return NULL;
	qp = ibv_create_qp_ex(s->ctx, &ax);
	if (!qp)
		return NULL;
	q->qpx = ibv_qp_to_qp_ex(qp);
	a->cap = ax.cap;
	return qp;
}

static struct ibv_qp *create_rc_qp(struct side *s, struct conn *q, uint32_t inl)
{
	struct ibv_qp_init_attr a = {
		.send_cq = q->scq,
		.recv_cq = q->rcq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = {
			.max_send_wr = QP_DEPTH,
			.max_recv_wr = QP_DEPTH,
			.max_send_sge = MIN(WANT_SGE, s->dev.max_sge),
			.max_recv_sge = MIN(WANT_SGE, s->dev.max_sge),
			.max_inline_data = inl,
		},
	};
	struct ibv_qp *qp = create_rc_qp_ex(s, q, &a);

	if (!qp)
		qp = ibv_create_qp(s->pd, &a);
	if (qp) {
		q->max_inline = a.cap.max_inline_data;
		q->max_send_sge = a.cap.max_send_sge;
		q->max_recv_sge = a.cap.max_recv_sge;
	}
	return qp;
}

static struct conn *conn_new(struct side *s, uint32_t psn)
{
	static const uint32_t inl[] = { WANT_INLINE, 256, 64, 0 };
	struct conn *q = calloc(1, sizeof(*q));
	unsigned int i;

	if (!q)
		return NULL;
	q->psn = psn & 0xffffff;
	q->scq = ibv_create_cq(s->ctx, CQ_DEPTH, NULL, NULL, 0);
	q->rcq = ibv_create_cq(s->ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!q->scq || !q->rcq) {
		perror("ibv_create_cq");
		conn_free(q);
		return NULL;
	}
	/* Ask for lots of inline data; settle for what the device has. */
	for (i = 0; i < ARRAY_SIZE(inl) && !q->qp; i++)
		q->qp = create_rc_qp(s, q, inl[i]);
	if (!q->qp) {
		perror("ibv_create_qp");
		conn_free(q);
		return NULL;
	}
	return q;
}

static void conn_info(const struct side *s, const struct conn *q, struct qp_info *i)
{
	memset(i, 0, sizeof(*i));
	i->qpn = q->qp->qp_num;
	i->psn = q->psn;
	i->mtu = s->port.active_mtu;
	memcpy(i->gid, s->gid.raw, 16);
}

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		  const char *what, char *err, size_t errlen)
{
	int ret = ibv_modify_qp(qp, a, mask);

	if (ret)
		snprintf(err, errlen, "ibv_modify_qp(%s): %s", what, strerror(ret));
	return ret;
}

/* RESET -> INIT -> RTR -> RTS, towards the QP described by r. */
static int conn_connect(const struct side *s, struct conn *q,
			const struct qp_info *r, const struct qp_params *p,
			char *err, size_t errlen)
{
	struct ibv_qp_attr a;
	int ret, tries;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = s->ib_port;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	/*
	 * rdma_rxe checks the QP's flush access before the MR's: with both
	 * granted here, a FLUSH the MR does not allow is a remote access
	 * error on either driver, not an invalid request on rdma_rxe.
	 */
	if (s->pmem & PMEM_FLUSH)
		a.qp_access_flags |= ACCESS_FLUSH_GLOBAL | ACCESS_FLUSH_PERSISTENT;
	if (modify(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   IBV_QP_ACCESS_FLAGS, "INIT", err, errlen))
		return -1;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = MIN(s->port.active_mtu, (enum ibv_mtu)r->mtu);
	a.dest_qp_num = r->qpn;
	a.rq_psn = r->psn;
	a.max_dest_rd_atomic = MIN(WANT_RD_ATOMIC, s->dev.max_qp_rd_atom);
	a.min_rnr_timer = p->min_rnr_timer;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, r->gid, 16);
	a.ah_attr.grh.sgid_index = s->gid_idx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = s->ib_port;
	/*
	 * The RDMA core resolves the peer's MAC here, giving up after a
	 * second: over a lossy wire (the soak's netem) the ARP exchange
	 * itself may be lost.  Try again, as rdma_cm users do.
	 */
	for (tries = 0;; tries++) {
		ret = modify(q->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER, "RTR", err, errlen);
		if (!ret)
			break;
		if (ret != ETIMEDOUT || tries == 4)
			return -1;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = p->timeout;
	a.retry_cnt = p->retry_cnt;
	a.rnr_retry = p->rnr_retry;
	a.sq_psn = q->psn;
	a.max_rd_atomic = MIN(WANT_RD_ATOMIC, s->dev.max_qp_init_rd_atom);
	return modify(q->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
		      "RTS", err, errlen);
}

/* Turn regions into SGEs, leaving out empty ones; returns the SGE count. */
static int to_sges(const struct side *s, const struct region *r, int n,
		   struct ibv_sge *sge)
{
	int i, k = 0;

	for (i = 0; i < n; i++) {
		if (!r[i].len)
			continue;
		sge[k].addr = (uintptr_t)(s->buf + r[i].off);
		sge[k].length = (uint32_t)r[i].len;
		sge[k].lkey = s->mr->lkey;
		k++;
	}
	return k;
}

static int post_recv(const struct side *s, struct ibv_qp *qp,
		     const struct region *r, int n, uint64_t wr_id)
{
	struct ibv_sge sge[MAX_REG];
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge }, *bad;

	wr.num_sge = to_sges(s, r, n, sge);
	return ibv_post_recv(qp, &wr, &bad);
}

/* ------------------------------------------------------------ server ---- */

/* The responder end: what the client's requests act on. */
struct server {
	struct side side;
	struct conn *conn;
	struct ibv_mw *mw;		/* type 2 */
	struct ibv_mw *mw1;		/* type 1 */
	struct ibv_mw *mw_kept;		/* type 2, outlives connections */
	struct ibv_mr *mr_nobind;	/* the buffer, without MW_BIND */
	struct ibv_mr *mr_small;	/* [MW_OFF, + MW_LEN), with MW_BIND */
};

static void server_drop_mr(struct ibv_mr **mr)
{
	if (*mr)
		ibv_dereg_mr(*mr);
	*mr = NULL;
}

static void server_drop_conn(struct server *s)
{
	if (s->mw)
		ibv_dealloc_mw(s->mw);
	s->mw = NULL;
	if (s->mw1)
		ibv_dealloc_mw(s->mw1);
	s->mw1 = NULL;
	/* After the windows: an MR with a window bound cannot go. */
	server_drop_mr(&s->mr_nobind);
	server_drop_mr(&s->mr_small);
	conn_free(s->conn);
	s->conn = NULL;
}

static void reply_err(struct msg *m, int status, const char *fmt, ...)
{
	va_list ap;

	m->status = status < 0 ? status : -EINVAL;
	va_start(ap, fmt);
	vsnprintf(m->err, sizeof(m->err), fmt, ap);
	va_end(ap);
}

static void serve_hello(struct server *s, struct msg *m)
{
	struct side *d = &s->side;

	memset(&m->hello, 0, sizeof(m->hello));
	m->hello.addr = (uintptr_t)d->buf;
	m->hello.len = BUF_SIZE;
	m->hello.rkey = d->mr->rkey;
	m->hello.max_recv_sge = MIN(WANT_SGE, d->dev.max_sge);
	m->hello.mtu = d->port.active_mtu;
	m->hello.mw_ok = d->mw_ok &&
		(d->dev.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	m->hello.atomic_ok = d->dev.atomic_cap != IBV_ATOMIC_NONE;
	m->hello.pmem = d->pmem;
	m->hello.rxe = d->rxe;
	memcpy(m->hello.gid, d->gid.raw, 16);
}

static void serve_qp_create(struct server *s, struct msg *m)
{
	struct qp_info client = m->qpi;

	server_drop_conn(s);
	s->conn = conn_new(&s->side, mix32(client.qpn ^ m->seed));
	if (!s->conn)
		return reply_err(m, -ENOMEM, "server: cannot create a QP");
	if (conn_connect(&s->side, s->conn, &client, &m->params, m->err,
			 sizeof(m->err))) {
		m->status = -EINVAL;
		server_drop_conn(s);
		return;
	}
	conn_info(&s->side, s->conn, &m->qpi);
}

static void serve_post_recv(struct server *s, struct msg *m)
{
	uint32_t i;
	int ret;

	if (!s->conn)
		return reply_err(m, -ENOTCONN, "server: no QP");
	if (!m->count) {
		ret = post_recv(&s->side, s->conn->qp, m->reg, m->nreg, m->wr_id);
		if (ret)
			reply_err(m, -ret, "server: ibv_post_recv: %s", strerror(ret));
		return;
	}
	for (i = 0; i < m->nreg; i++) {
		ret = post_recv(&s->side, s->conn->qp, &m->reg[i], 1, m->wr_id + i);
		if (ret)
			return reply_err(m, -ret, "server: ibv_post_recv #%u: %s",
					 i, strerror(ret));
	}
}

/* Wait for count receive completions, then pick up any extra ones too. */
static void serve_poll_recv(struct server *s, struct msg *m)
{
	int want = MIN((int)m->count, MAX_WC), got, more;

	if (!s->conn)
		return reply_err(m, -ENOTCONN, "server: no QP");
	got = poll_wcs(s->conn->rcq, m->wc, want, WAIT_MS);
	if (got < 0)
		return reply_err(m, -EIO, "server: ibv_poll_cq failed");
	more = poll_wcs(s->conn->rcq, m->wc + got, MAX_WC - got, 0);
	m->status = got + MAX(more, 0);
}

static void serve_bind_mw(struct server *s, struct msg *m)
{
	struct ibv_send_wr wr = {
		.wr_id = 0xb1d, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct wwc wc;
	int ret;

	if (!s->conn)
		return reply_err(m, -ENOTCONN, "server: no QP");
	if (!s->side.mw_ok)
		return reply_err(m, -ENOTSUP, "server: MR without IBV_ACCESS_MW_BIND");
	if (s->mw)
		ibv_dealloc_mw(s->mw);
	s->mw = ibv_alloc_mw(s->side.pd, IBV_MW_TYPE_2);
	if (!s->mw)
		return reply_err(m, -errno, "server: ibv_alloc_mw: %s", strerror(errno));
	wr.bind_mw.mw = s->mw;
	wr.bind_mw.rkey = ibv_inc_rkey(s->mw->rkey);
	wr.bind_mw.bind_info.mr = s->side.mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)(s->side.buf + m->reg[0].off);
	wr.bind_mw.bind_info.length = m->reg[0].len;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_REMOTE_READ;
	ret = ibv_post_send(s->conn->qp, &wr, &bad);
	if (ret)
		return reply_err(m, -ret, "server: post BIND_MW: %s", strerror(ret));
	if (poll_wcs(s->conn->scq, &wc, 1, WAIT_MS) != 1)
		return reply_err(m, -ETIMEDOUT, "server: no BIND_MW completion");
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_BIND_MW)
		return reply_err(m, -EIO, "server: BIND_MW completed with %s, opcode %s",
				 ibv_wc_status_str(wc.status), wc_opcode_str(wc.opcode));
	m->val = wr.bind_mw.rkey;
}

/* The MR a CMD_MW bind names, registered when first needed. */
static struct ibv_mr *server_mw_mr(struct server *s, int which)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	if (which == MW_MR_NOBIND && !s->mr_nobind)
		s->mr_nobind = ibv_reg_mr(s->side.pd, s->side.buf, BUF_SIZE, access);
	if (which == MW_MR_SMALL && !s->mr_small)
		s->mr_small = ibv_reg_mr(s->side.pd, s->side.buf + MW_OFF, MW_LEN,
					 access | IBV_ACCESS_MW_BIND);
	return which == MW_MR_NOBIND ? s->mr_nobind :
	       which == MW_MR_SMALL ? s->mr_small : s->side.mr;
}

/* The window slot of an MW_T* kind. */
static struct ibv_mw **server_mwp(struct server *s, int kind)
{
	if (kind == MW_T1 || kind == MW_T1_WR)
		return &s->mw1;
	return kind == MW_T2_KEPT ? &s->mw_kept : &s->mw;
}

/*
 * Bind window *mwp (allocated if need be) of kind MW_T1 (ibv_bind_mw) or
 * another (an IBV_WR_BIND_MW work request, key byte from ibv_inc_rkey)
 * over bi; the completion goes to *wc.  Returns 0 or an errno.
 */
static int server_bind(struct server *s, int kind, struct ibv_mw **mwp,
		       const struct ibv_mw_bind_info *bi, struct wwc *wc)
{
	struct ibv_send_wr wr = {
		.wr_id = 0xb1d, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_mw_bind b = {
		.wr_id = 0xb1d, .send_flags = IBV_SEND_SIGNALED, .bind_info = *bi,
	};
	uint32_t old;
	int ret;

	if (!*mwp)
		*mwp = ibv_alloc_mw(s->side.pd, kind == MW_T1 || kind == MW_T1_WR ?
				    IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
	if (!*mwp)
		return errno;
	old = (*mwp)->rkey;
	if (kind == MW_T1) {
		ret = ibv_bind_mw(s->conn->qp, *mwp, &b);
	} else {
		wr.bind_mw.mw = *mwp;
		wr.bind_mw.rkey = ibv_inc_rkey(old);
		wr.bind_mw.bind_info = *bi;
		ret = ibv_post_send(s->conn->qp, &wr, &bad);
	}
	if (ret)
		return ret;
	if (poll_wcs(s->conn->scq, wc, 1, WAIT_MS) != 1)
		return ETIMEDOUT;
	/* ibv_bind_mw() set the new rkey; on an error, the owner undoes it. */
	if (wc->status != IBV_WC_SUCCESS)
		(*mwp)->rkey = old;
	else if (kind != MW_T1)
		(*mwp)->rkey = wr.bind_mw.rkey;
	return 0;
}

static void serve_mw_bind(struct server *s, struct msg *m)
{
	int type = m->wr_id & 0xff;
	struct ibv_mw **mwp = server_mwp(s, type);
	struct ibv_mw_bind_info bi = {
		.mr = server_mw_mr(s, m->wr_id >> 8),
		.addr = (uintptr_t)(s->side.buf + m->reg[0].off),
		.length = m->reg[0].len,
		.mw_access_flags = m->limit,
	};
	int ret;

	if (!bi.mr)
		return reply_err(m, -errno, "server: ibv_reg_mr: %s", strerror(errno));
	/*
	 * Length 0 is a type 1 unbind.  The MR stays named: librxe 44 reads
	 * its lkey even then (mr NULL would crash it); the kernel ignores it.
	 */
	if (!bi.length)
		bi.addr = 0;
	ret = server_bind(s, type, mwp, &bi, &m->wc[0]);
	if (ret)
		return reply_err(m, -ret, "server: bind type %d: %s", type, strerror(ret));
	m->val = (*mwp)->rkey;
}

static void serve_mw_inv(struct server *s, struct msg *m)
{
	struct ibv_send_wr wr = {
		.wr_id = 0x1b1d, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = m->val,
	}, *bad;
	int ret = ibv_post_send(s->conn->qp, &wr, &bad);

	if (ret)
		return reply_err(m, -ret, "server: post LOCAL_INV: %s", strerror(ret));
	if (poll_wcs(s->conn->scq, &m->wc[0], 1, WAIT_MS) != 1)
		return reply_err(m, -ETIMEDOUT, "server: no LOCAL_INV completion");
}

/* ibv_dereg_mr of an MR with a window bound fails (EBUSY), then works. */
static void serve_mw_dereg_busy(struct server *s, struct msg *m)
{
	struct ibv_mw_bind_info bi = {
		.mr = server_mw_mr(s, MW_MR_SMALL), .addr = (uintptr_t)(s->side.buf + MW_OFF),
		.length = MW_LEN, .mw_access_flags = IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_mw *mw = NULL;
	int ret;

	if (!bi.mr)
		return reply_err(m, -errno, "server: ibv_reg_mr: %s", strerror(errno));
	ret = server_bind(s, MW_T1, &mw, &bi, &m->wc[0]);
	if (ret || m->wc[0].status != IBV_WC_SUCCESS) {
		if (mw)
			ibv_dealloc_mw(mw);
		return reply_err(m, -EIO, "server: bind for the dereg case: %s",
				 ret ? strerror(ret) : ibv_wc_status_str(m->wc[0].status));
	}
	ret = ibv_dereg_mr(s->mr_small);
	if (!ret)
		s->mr_small = NULL;
	ibv_dealloc_mw(mw);
	/*
	 * rdma_rxe refuses it with EINVAL (rxe_verbs.c, rxe_dereg_mr()); the
	 * reply's val says which error came, the client says it accepted it.
	 */
	m->val = ret;
	if (ret != EBUSY && !(ret == EINVAL && s->side.rxe))
		return reply_err(m, -EIO, "server: ibv_dereg_mr with a window bound: %s",
				 ret ? strerror(ret) : "succeeded");
	ret = ibv_dereg_mr(s->mr_small);
	if (!ret)
		s->mr_small = NULL;
	if (ret)
		return reply_err(m, -ret, "server: ibv_dereg_mr after dealloc_mw: %s",
				 strerror(ret));
}

static void serve_mw(struct server *s, struct msg *m)
{
	struct ibv_mw **mwp = server_mwp(s, m->wr_id & 0xff);

	if (!s->conn)
		return reply_err(m, -ENOTCONN, "server: no QP");
	if (!s->side.mw_ok)
		return reply_err(m, -ENOTSUP, "server: MR without IBV_ACCESS_MW_BIND");
	memset(&m->wc[0], 0, sizeof(m->wc[0]));
	switch (m->count) {
	case MW_OP_BIND:
		return serve_mw_bind(s, m);
	case MW_OP_INV:
		return serve_mw_inv(s, m);
	case MW_OP_DEALLOC:
		if (*mwp && ibv_dealloc_mw(*mwp))
			return reply_err(m, -EIO, "server: ibv_dealloc_mw failed");
		*mwp = NULL;
		return;
	case MW_OP_DEREG_BUSY:
		return serve_mw_dereg_busy(s, m);
	}
	reply_err(m, -ENOSYS, "server: unknown MW operation %u", m->count);
}

/* Serve one request; m becomes the reply.  Returns 1 after CMD_QUIT. */
static int serve(struct server *s, struct msg *m)
{
	uint8_t *buf = s->side.buf;
	uint64_t bad;

	m->status = 0;
	m->err[0] = 0;
	if (m->nreg > MAX_REG || !regions_fit(m->reg, m->nreg, BUF_SIZE)) {
		reply_err(m, -ERANGE, "server: bad regions");
		return 0;
	}
	switch (m->cmd) {
	case CMD_HELLO:
		serve_hello(s, m);
		break;
	case CMD_QP_CREATE:
		serve_qp_create(s, m);
		break;
	case CMD_QP_DESTROY:
		server_drop_conn(s);
		break;
	case CMD_FILL:
		region_fill(buf, m->reg, m->nreg, m->seed);
		break;
	case CMD_POISON:
		region_poison(buf, m->reg, m->nreg);
		break;
	case CMD_CHECK:
		if (m->count)
			spoil(buf, m->reg, m->nreg);
		bad = region_check(buf, m->reg, m->nreg, m->seed, m->limit,
				   m->err, sizeof(m->err));
		m->status = bad ? -EIO : 0;
		break;
	case CMD_SET64:
		memcpy(buf + m->reg[0].off, &m->val, 8);
		break;
	case CMD_GET64:
		memcpy(&m->val, buf + m->reg[0].off, 8);
		break;
	case CMD_POST_RECV:
		serve_post_recv(s, m);
		break;
	case CMD_POLL_RECV:
		serve_poll_recv(s, m);
		break;
	case CMD_BIND_MW:
		serve_bind_mw(s, m);
		break;
	case CMD_MW:
		serve_mw(s, m);
		break;
	case CMD_QUIT:
		return 1;
	default:
		reply_err(m, -ENOSYS, "server: unknown command %u", m->cmd);
	}
	return 0;
}

/* --------------------------------------------------------------- tcp ---- */

static int send_all(int fd, const void *p, size_t len)
{
	ssize_t k;

	while (len) {
		k = send(fd, p, len, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p = (const char *)p + k;
		len -= k;
	}
	return 0;
}

static int recv_all(int fd, void *p, size_t len)
{
	ssize_t k;

	while (len) {
		k = recv(fd, p, len, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p = (char *)p + k;
		len -= k;
	}
	return 0;
}

static void tcp_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Listen on every address (IPv6 socket that takes IPv4 too), accept one. */
static int tcp_accept_one(int port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd, cfd = -1, one = 1, zero = 0;
	struct pollfd pfd;

	fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (bind(fd, (struct sockaddr *)&a6, sizeof(a6))) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return -1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&a4, sizeof(a4))) {
			perror("bind");
			close(fd);
			return -1;
		}
	}
	if (listen(fd, 1)) {
		perror("listen");
		close(fd);
		return -1;
	}
	fprintf(stderr, "sroce_integrity: listening on port %d\n", port);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&pfd, 1, ACCEPT_MS) == 1)
		cfd = accept(fd, NULL, NULL);
	else
		fprintf(stderr, "sroce_integrity: no client within %d s\n",
			ACCEPT_MS / 1000);
	close(fd);
	if (cfd >= 0)
		tcp_nodelay(cfd);
	return cfd;
}

/* Connect to host:port, retrying for a while: the server may be starting. */
static int tcp_connect(const char *host, int port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	uint64_t deadline = now_ms() + WAIT_MS;
	struct addrinfo *res, *ai;
	char service[16];
	int fd, ret;

	snprintf(service, sizeof(service), "%d", port);
	ret = getaddrinfo(host, service, &hints, &res);
	if (ret) {
		fprintf(stderr, "%s: %s\n", host, gai_strerror(ret));
		return -1;
	}
	do {
		for (ai = res; ai; ai = ai->ai_next) {
			fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
			if (fd < 0)
				continue;
			if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
				freeaddrinfo(res);
				tcp_nodelay(fd);
				return fd;
			}
			close(fd);
		}
		usleep(100 * 1000);
	} while (now_ms() < deadline);
	freeaddrinfo(res);
	fprintf(stderr, "cannot connect to %s port %d\n", host, port);
	return -1;
}

static int server_main(const struct opts *o)
{
	struct server s = { 0 };
	struct msg *m = calloc(1, sizeof(*m));
	int fd, quit = 0;

	if (!m || side_open(&s.side, o))
		return 2;
	fd = tcp_accept_one(o->tcp_port);
	if (fd < 0)
		return 2;
	while (!quit) {
		if (recv_all(fd, m, sizeof(*m)))
			break;	/* the client went away */
		quit = serve(&s, m);
		if (send_all(fd, m, sizeof(*m)))
			break;
	}
	close(fd);
	server_drop_conn(&s);
	if (s.mw_kept)
		ibv_dealloc_mw(s.mw_kept);
	side_close(&s.side);
	free(m);
	return quit ? 0 : 1;
}

/* ------------------------------------------------------------ client ---- */

struct client {
	const struct opts *o;
	struct side side;
	struct conn *conn;
	struct qp_params params;	/* of conn */
	uint32_t rqpn;			/* the server's QP */
	struct hello rh;		/* the server's buffer and device */
	int fd;				/* the control socket, or -1 */
	struct server *lo;		/* or the loopback peer */
	bool dead;			/* the control connection is gone */
	bool timed_out;			/* the case waited in vain */
	int timeouts_in_a_row;		/* cases that did; at GIVE_UP, stop */
	uint32_t seed;			/* of the current case */
	uint32_t case_no;
	uint64_t wr_seq;
	uint32_t last_status;		/* of the first WC of expect_local() */
	int tap_n;
	int n_fail;
	int n_skip;
	char diag[16384];
	size_t dlen;
	char skip[160];
	struct msg m;			/* scratch for requests */
};

static const struct qp_params default_params = {
	.timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 12,
};

/* For the error cases: give up soon. */
static const struct qp_params fast_params = {
	.timeout = 14, .retry_cnt = 1, .rnr_retry = 0, .min_rnr_timer = 1,
};

static void note(struct client *c, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (c->dlen >= sizeof(c->diag) - 2)
		return;
	va_start(ap, fmt);
	k = vsnprintf(c->diag + c->dlen, sizeof(c->diag) - c->dlen - 1, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	c->dlen = MIN(c->dlen + k, sizeof(c->diag) - 2);
	c->diag[c->dlen++] = '\n';
	c->diag[c->dlen] = 0;
}

#define fail(c, ...)	(note((c), __VA_ARGS__), FAIL)

static int skip(struct client *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->skip, sizeof(c->skip), fmt, ap);
	va_end(ap);
	return SKIP;
}

static uint64_t next_wrid(struct client *c)
{
	return ((uint64_t)c->case_no << 32) | ++c->wr_seq;
}

/* One request to the server (or the loopback peer); 0 if it succeeded. */
static int rpc(struct client *c, struct msg *m, uint32_t cmd)
{
	m->cmd = cmd;
	if (c->dead) {
		note(c, "control connection lost earlier");
		return -1;
	}
	if (c->lo) {
		serve(c->lo, m);
	} else if (send_all(c->fd, m, sizeof(*m)) || recv_all(c->fd, m, sizeof(*m))) {
		c->dead = true;
		note(c, "control connection to the server lost");
		return -1;
	}
	if (m->status < 0) {
		note(c, "%s", m->err[0] ? m->err : "server request failed");
		return -1;
	}
	return 0;
}

static struct msg *msg_regions(struct client *c, const struct region *r, int n)
{
	struct msg *m = &c->m;

	memset(m, 0, offsetof(struct msg, wc));
	m->err[0] = 0;
	m->nreg = n;
	if (n)
		memcpy(m->reg, r, n * sizeof(*r));
	m->seed = c->seed;
	return m;
}

static int rpc_fill(struct client *c, const struct region *r, int n)
{
	return rpc(c, msg_regions(c, r, n), CMD_FILL);
}

static int rpc_poison(struct client *c, const struct region *r, int n)
{
	return rpc(c, msg_regions(c, r, n), CMD_POISON);
}

static int rpc_check(struct client *c, const struct region *r, int n, uint64_t limit)
{
	struct msg *m = msg_regions(c, r, n);

	m->limit = limit;
	m->count = c->o->self_check;
	if (!rpc(c, m, CMD_CHECK))
		return PASS;
	note(c, "remote data is wrong (seed 0x%08x)", c->seed);
	return FAIL;
}

static int rpc_post_recv(struct client *c, const struct region *r, int n,
			 uint64_t wr_id, bool one_per_region)
{
	struct msg *m = msg_regions(c, r, n);

	m->wr_id = wr_id;
	m->count = one_per_region;
	return rpc(c, m, CMD_POST_RECV);
}

/* The server's receive completions: returns how many, or -1. */
static int rpc_poll_recv(struct client *c, int n, struct wwc *out)
{
	struct msg *m = msg_regions(c, NULL, 0);

	m->count = n;
	if (rpc(c, m, CMD_POLL_RECV))
		return -1;
	memcpy(out, m->wc, m->status * sizeof(*out));
	return m->status;
}

static int rpc_u64(struct client *c, uint32_t cmd, uint64_t off, uint64_t *val)
{
	struct region r = { off, 8, 0 };
	struct msg *m = msg_regions(c, &r, 1);

	m->val = *val;
	if (rpc(c, m, cmd))
		return -1;
	*val = m->val;
	return 0;
}

/* ------------------------------------------------------- connections ---- */

static void conn_drop(struct client *c)
{
	conn_free(c->conn);
	c->conn = NULL;
}

/*
 * A fresh pair of connected QPs, with params on both.  bogus: connect to a
 * QP number nobody has and leave the server alone.
 */
static int conn_setup(struct client *c, const struct qp_params *p, bool bogus)
{
	struct qp_info mine, theirs;
	struct msg *m;
	char err[256];

	conn_drop(c);
	/* A PSN close to the 24-bit wrap: long messages cross it. */
	c->conn = conn_new(&c->side, 0xffffff - 64 - (c->seed & 0x3ff));
	if (!c->conn)
		return fail(c, "cannot create the local QP");
	c->params = *p;
	conn_info(&c->side, c->conn, &mine);
	if (bogus) {
		memset(&theirs, 0, sizeof(theirs));
		theirs.qpn = BOGUS_QPN;
		theirs.psn = 0x123456;
		theirs.mtu = c->rh.mtu;
		memcpy(theirs.gid, c->rh.gid, 16);
	} else {
		m = msg_regions(c, NULL, 0);
		m->params = *p;
		m->qpi = mine;
		if (rpc(c, m, CMD_QP_CREATE))
			goto err;
		theirs = m->qpi;
	}
	c->rqpn = theirs.qpn;
	if (!conn_connect(&c->side, c->conn, &theirs, p, err, sizeof(err)))
		return PASS;
	note(c, "%s", err);
err:
	conn_drop(c);
	return FAIL;
}

/* The shared connection of the data tests, made when first needed. */
static int conn_get(struct client *c)
{
	if (c->conn)
		return PASS;
	return conn_setup(c, &default_params, false);
}

/* ------------------------------------------------------- completions ---- */

/* What a completion should say; a negative field is not checked. */
struct wexp {
	uint64_t wr_id;
	int status;
	int opcode;
	int64_t byte_len;
	int flags;		/* over WC_FLAGS_CHECKED */
	uint32_t imm;		/* if flags has WITH_IMM or WITH_INV */
	uint32_t qpn;
};

/*
 * The flags checked.  Not IBV_WC_GRH, meaningless for RC (rdma_rxe sets it
 * on every receive), nor IBV_WC_IP_CSUM_OK.
 */
#define WC_FLAGS_CHECKED (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)

static int wc_check(struct client *c, const char *who, const struct wwc *w,
		    const struct wexp *e)
{
	int bad = 0;

	if (w->status != (uint32_t)e->status)
		bad++, note(c, "%s wr_id 0x%" PRIx64 ": status %s (%u, vendor_err 0x%x), want %s",
			    who, w->wr_id, ibv_wc_status_str(w->status), w->status,
			    w->vendor_err, ibv_wc_status_str(e->status));
	if (w->wr_id != e->wr_id)
		bad++, note(c, "%s: wr_id 0x%" PRIx64 ", want 0x%" PRIx64,
			    who, w->wr_id, e->wr_id);
	if (w->qp_num != e->qpn)
		bad++, note(c, "%s: qp_num 0x%x, want 0x%x", who, w->qp_num, e->qpn);
	if (bad || w->status != IBV_WC_SUCCESS)
		return bad ? FAIL : PASS;	/* the rest is undefined */
	if (e->opcode >= 0 && w->opcode != (uint32_t)e->opcode)
		bad++, note(c, "%s: opcode %s (%u), want %s", who, wc_opcode_str(w->opcode),
			    w->opcode, wc_opcode_str(e->opcode));
	if (e->byte_len >= 0 && w->byte_len != (uint64_t)e->byte_len)
		bad++, note(c, "%s: byte_len %u, want %" PRId64, who, w->byte_len, e->byte_len);
	if (e->flags >= 0 && (w->flags & WC_FLAGS_CHECKED) != (uint32_t)e->flags)
		bad++, note(c, "%s: wc_flags 0x%x, want 0x%x (of 0x%x)%s", who,
			    w->flags, e->flags, WC_FLAGS_CHECKED,
			    (e->flags & IBV_WC_WITH_INV) && (w->flags & IBV_WC_IP_CSUM_OK) ?
			    "; 0x4 is the kernel's IB_WC_WITH_INVALIDATE, not IBV_WC_WITH_INV:"
			    " kernel flag values in a user CQE?" : "");
	if (e->flags > 0 && (e->flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)) &&
	    w->imm != e->imm)
		bad++, note(c, "%s: %s 0x%08x, want 0x%08x", who,
			    e->flags & IBV_WC_WITH_INV ? "invalidated_rkey" : "imm_data",
			    w->imm, e->imm);
	return bad ? FAIL : PASS;
}

/* Check n completions against e[]; extra ones are an error too. */
static int wcs_check(struct client *c, const char *who, const struct wwc *w,
		     int got, const struct wexp *e, int n)
{
	int i, ret = PASS;

	if (got < n)
		c->timed_out = true;
	if (got < n)
		ret = fail(c, "%s: %d of %d completions within %d s", who,
			   MAX(got, 0), n, c->o->wait_ms / 1000);
	if (got > n)
		ret = fail(c, "%s: %d completions, want %d; extra: wr_id 0x%" PRIx64
			   " status %s", who, got, n, w[n].wr_id,
			   ibv_wc_status_str(w[n].status));
	for (i = 0; i < MIN(got, n); i++)
		if (wc_check(c, who, &w[i], &e[i]) != PASS)
			ret = FAIL;
	return ret;
}

/* Wait for n completions on a local CQ and check them. */
static int expect_local(struct client *c, struct ibv_cq *cq, const char *who,
			const struct wexp *e, int n)
{
	struct wwc w[MAX_WC + 1];
	int got, more;

	got = poll_wcs(cq, w, n, c->o->wait_ms);
	if (got < 0)
		return fail(c, "%s: ibv_poll_cq failed", who);
	more = poll_wcs(cq, w + got, MAX_WC + 1 - got, 0);
	c->last_status = got > 0 ? w[0].status : IBV_WC_SUCCESS;
	return wcs_check(c, who, w, got + MAX(more, 0), e, n);
}

static int expect_send(struct client *c, const struct wexp *e, int n)
{
	return expect_local(c, c->conn->scq, "requester", e, n);
}

/*
 * rdma_rxe writes the kernel's flag values into a user CQE (rxe_resp.c,
 * do_complete()): IB_WC_WITH_INVALIDATE (1 << 2) is IBV_WC_IP_CSUM_OK to
 * the user, and the IBV_WC_WITH_INV bit stays clear.  On an rxe server,
 * read the bit as what rxe meant, and say so; the rkey is still checked.
 */
static void rxe_wc_flags(struct client *c, struct wwc *w, int n)
{
	int i;

	if (!c->rh.rxe)
		return;
	for (i = 0; i < n; i++) {
		if (!(w[i].flags & IBV_WC_IP_CSUM_OK) || (w[i].flags & IBV_WC_WITH_INV))
			continue;
		w[i].flags = (w[i].flags & ~IBV_WC_IP_CSUM_OK) | IBV_WC_WITH_INV;
		printf("# accepted: the server is rdma_rxe, whose receive of wr_id"
		       " 0x%" PRIx64 " says IBV_WC_IP_CSUM_OK for IBV_WC_WITH_INV"
		       " (rxe_resp.c, do_complete(): kernel flag values)\n", w[i].wr_id);
	}
}

static int expect_remote_recv(struct client *c, const struct wexp *e, int n)
{
	struct wwc w[MAX_WC];
	int got = rpc_poll_recv(c, n, w);

	if (got < 0)
		return FAIL;
	rxe_wc_flags(c, w, got);
	return wcs_check(c, "responder", w, got, e, n);
}

static struct wexp wexp_ok(struct client *c, uint64_t wr_id, int opcode, int64_t len)
{
	return (struct wexp){
		.wr_id = wr_id, .status = IBV_WC_SUCCESS, .opcode = opcode,
		.byte_len = len, .flags = -1, .qpn = c->conn->qp->qp_num,
	};
}

static struct wexp wexp_status(struct client *c, uint64_t wr_id, int status)
{
	struct wexp e = wexp_ok(c, wr_id, -1, -1);

	e.status = status;
	return e;
}

/* A responder-side receive completion. */
static struct wexp wexp_recv(struct client *c, uint64_t wr_id, int opcode,
			     int64_t len, int flags, uint32_t imm)
{
	return (struct wexp){
		.wr_id = wr_id, .status = IBV_WC_SUCCESS, .opcode = opcode,
		.byte_len = len, .flags = flags, .imm = imm, .qpn = c->rqpn,
	};
}

/* ------------------------------------------------------------ posting ---- */

/* A send-queue work request, described for send_wr(). */
struct swr {
	enum ibv_wr_opcode op;
	const struct region *reg;
	int nreg;
	unsigned int flags;
	uint64_t raddr;		/* offset into the server's buffer */
	uint32_t rkey;
	uint32_t imm;		/* imm_data (raw) or the rkey to invalidate */
	uint64_t compare_add;
	uint64_t swap;
	bool absolute;		/* raddr is an address, not an offset */
	uint8_t flush_type;	/* WR_FLUSH: FLUSH_GLOBAL if 0 */
	uint8_t flush_level;	/* WR_FLUSH: FLUSH_RANGE or FLUSH_MR */
};

static void send_wr(struct client *c, const struct swr *s, struct ibv_send_wr *wr,
		    struct ibv_sge *sge)
{
	uint64_t raddr = s->absolute ? s->raddr : c->rh.addr + s->raddr;

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = next_wrid(c);
	wr->opcode = s->op;
	wr->send_flags = s->flags | IBV_SEND_SIGNALED;
	wr->sg_list = sge;
	wr->num_sge = to_sges(&c->side, s->reg, s->nreg, sge);
	switch (s->op) {
	case IBV_WR_SEND_WITH_IMM:
		wr->imm_data = s->imm;
		break;
	case IBV_WR_SEND_WITH_INV:
		wr->invalidate_rkey = s->imm;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wr->imm_data = s->imm;
		/* fall through */
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_READ:
		wr->wr.rdma.remote_addr = raddr;
		wr->wr.rdma.rkey = s->rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wr->wr.atomic.remote_addr = raddr;
		wr->wr.atomic.rkey = s->rkey;
		wr->wr.atomic.compare_add = s->compare_add;
		wr->wr.atomic.swap = s->swap;
		break;
	default:
		break;
	}
}

/*
 * FLUSH by way of librxe 44, which has no verb for it: the ATOMIC_WRITE
 * that ibv_wr_atomic_write() has just written into the send ring, not yet
 * handed over (ibv_wr_complete() moves the producer index and rings the
 * doorbell), is rewritten into the FLUSH WQE newer librxe writes.  The
 * ring is one of this process's mappings of the uverbs device; the WQE
 * is the one at its producer index with our wr_id.  Offsets are those of
 * struct rxe_queue_buf and struct rxe_send_wqe (rdma_user_rxe.h, whose
 * <linux/in.h> does not mix with <netinet/in.h>).
 */
#define RXE_QBUF_DATA		384	/* after the header, cache-line padded */
#define RXE_QBUF_PRODUCER	128
#define WQE_OPCODE		12	/* wr.opcode */
#define WQE_WR			24	/* wr.wr, the union; wr.flush */
#define WQE_IOVA		152
#define WQE_DMA_LENGTH		184	/* dma.length, then dma.resid */
#define WQE_DMA_DATA		208	/* dma.atomic_wr / sge[] / inline_data */

struct rxe_flush_wr {
	uint64_t remote_addr;
	uint32_t length;	/* unused: dma.length is the range's */
	uint32_t rkey;
	uint8_t type;
	uint8_t level;
};

static uint8_t *ring_find_wqe(uint64_t wr_id)
{
	uint32_t log2, mask, prod, opcode;
	unsigned long lo, hi;
	char line[512], perms[8];
	uint8_t *base, *w, *found = NULL;
	uint64_t id;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 ||
		    strncmp(perms, "rw", 2) || !strstr(line, "/dev/infiniband/uverbs") ||
		    hi - lo < RXE_QBUF_DATA)
			continue;
		base = (uint8_t *)lo;
		memcpy(&log2, base, 4);
		memcpy(&mask, base + 4, 4);
		memcpy(&prod, base + RXE_QBUF_PRODUCER, 4);
		if (log2 < 8 || log2 > 20 || (mask & (mask + 1)) ||
		    RXE_QBUF_DATA + (((uint64_t)mask + 1) << log2) > hi - lo)
			continue;
		w = base + RXE_QBUF_DATA + ((uint64_t)(prod & mask) << log2);
		memcpy(&id, w, 8);
		memcpy(&opcode, w + WQE_OPCODE, 4);
		if (id == wr_id && opcode == IBV_WR_ATOMIC_WRITE)
			found = w;
	}
	fclose(f);
	return found;
}

static int ring_make_flush(uint8_t *w, const struct swr *s, uint64_t raddr,
			   uint32_t len)
{
	struct rxe_flush_wr fl = {
		.remote_addr = raddr, .rkey = s->rkey,
		.type = s->flush_type ? s->flush_type : FLUSH_GLOBAL,
		.level = s->flush_level,
	};
	uint32_t op = WR_FLUSH;

	memcpy(w + WQE_OPCODE, &op, 4);
	memset(w + WQE_WR, 0, 32);
	memcpy(w + WQE_WR, &fl, sizeof(fl));
	memcpy(w + WQE_IOVA, &raddr, 8);
	memcpy(w + WQE_DMA_LENGTH, &len, 4);
	memcpy(w + WQE_DMA_LENGTH + 4, &len, 4);
	memset(w + WQE_DMA_DATA, 0, 8);
	return 0;
}

static bool is_pmem_op(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_WRITE || (int)op == WR_FLUSH;
}

/*
 * ATOMIC_WRITE (its 8 bytes: the start of s->reg[0] in the local buffer)
 * or FLUSH (over s->reg[0].len bytes at raddr), through the extended API.
 */
static int post_pmem(struct client *c, const struct swr *s, uint64_t *id)
{
	struct ibv_qp_ex *qx = c->conn->qpx;
	uint64_t raddr = s->absolute ? s->raddr : c->rh.addr + s->raddr;
	uint64_t len = s->nreg ? s->reg[0].len : 0;
	uint8_t v[8] = { 0 }, *w;
	int ret;

	if (!qx)
		return fail(c, "the QP was made without ATOMIC_WRITE (ibv_create_qp_ex)");
	if (s->nreg)
		memcpy(v, c->side.buf + s->reg[0].off, MIN(len, 8));
	*id = next_wrid(c);
	ibv_wr_start(qx);
	qx->wr_id = *id;
	qx->wr_flags = s->flags | IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qx, s->rkey, raddr, v);
	if ((int)s->op == WR_FLUSH) {
		w = ring_find_wqe(*id);
		if (!w) {
			ibv_wr_abort(qx);
			return fail(c, "FLUSH: librxe's WQE is not in a send ring we see");
		}
		ring_make_flush(w, s, raddr, (uint32_t)len);
	}
	ret = ibv_wr_complete(qx);
	if (ret)
		return fail(c, "ibv_wr_complete: %s", strerror(ret));
	return PASS;
}

/*
 * Post n work requests, their wr_ids to ids[]: the classic ones in
 * chains, ATOMIC_WRITE and FLUSH one at a time in between (post_pmem()).
 */
static int post_chain(struct client *c, const struct swr *s, int n, uint64_t *ids)
{
	struct ibv_send_wr wr[MAX_WC], *bad = NULL;
	struct ibv_sge sge[MAX_WC][MAX_REG];
	int i, j, ret;

	for (i = 0; i < n; i = j) {
		if (is_pmem_op(s[i].op)) {
			if (post_pmem(c, &s[i], &ids[i]) != PASS)
				return FAIL;
			j = i + 1;
			continue;
		}
		for (j = i; j < n && !is_pmem_op(s[j].op); j++) {
			send_wr(c, &s[j], &wr[j], sge[j]);
			wr[j].next = NULL;
			if (j > i)
				wr[j - 1].next = &wr[j];
			ids[j] = wr[j].wr_id;
		}
		ret = ibv_post_send(c->conn->qp, &wr[i], &bad);
		if (ret)
			return fail(c, "ibv_post_send: %s (at WR #%ld)", strerror(ret),
				    bad ? (long)(bad - wr) : -1L);
	}
	return PASS;
}

static int post_one(struct client *c, const struct swr *s, uint64_t *id)
{
	return post_chain(c, s, 1, id);
}

/* ----------------------------------------------------------- transfers ---- */

enum xop { X_SEND, X_SEND_IMM, X_WRITE, X_WRITE_IMM, X_READ, X_NOPS };

static const char *const xop_name[] = {
	"SEND", "SEND_WITH_IMM", "RDMA_WRITE", "RDMA_WRITE_WITH_IMM", "RDMA_READ",
};

/* One data transfer test. */
struct xfer {
	enum xop op;
	uint64_t len;
	uint64_t loff;		/* where the local regions start */
	uint64_t roff;		/* where the remote regions start */
	int lsge;		/* local SGEs (gather, or scatter for READ) */
	int rsge;		/* receive SGEs (SENDs) */
	uint64_t rextra;	/* receive buffer larger than the message by this */
	bool inl;		/* IBV_SEND_INLINE */
};

static uint32_t imm_of(uint32_t seed)
{
	return htonl(mix32(seed) | 1);
}

static int check_local(struct client *c, const struct region *r, int n, uint64_t limit)
{
	char err[256];

	if (c->o->self_check)
		spoil(c->side.buf, r, n);
	if (!region_check(c->side.buf, r, n, c->seed, limit, err, sizeof(err)))
		return PASS;
	return fail(c, "local data is wrong (seed 0x%08x): %s", c->seed, err);
}

static int sge_limits(struct client *c, const struct xfer *x)
{
	int lmax = c->conn->max_send_sge;

	if (x->op == X_READ)
		lmax = MIN(lmax, c->side.dev.max_sge_rd);
	if (x->lsge > lmax || x->lsge > MAX_REG)
		return skip(c, "%d local SGEs wanted, the QP takes %d", x->lsge, lmax);
	if (x->rsge > (int)c->rh.max_recv_sge || x->rsge > MAX_REG)
		return skip(c, "%d receive SGEs wanted, the server takes %u",
			    x->rsge, c->rh.max_recv_sge);
	if (x->inl && x->len > c->conn->max_inline)
		return skip(c, "inline %" PRIu64 " bytes > max_inline_data %u",
			    x->len, c->conn->max_inline);
	return PASS;
}

/* Fill the local source; post; for inline, scribble over the source at once. */
static int post_source(struct client *c, struct swr *s, uint64_t *id)
{
	region_poison(c->side.buf, s->reg, s->nreg);
	region_fill(c->side.buf, s->reg, s->nreg, c->seed);
	if (post_one(c, s, id) != PASS)
		return FAIL;
	if (s->flags & IBV_SEND_INLINE)
		region_poison(c->side.buf, s->reg, s->nreg);
	return PASS;
}

/* SEND, SEND_WITH_IMM or (inv_rkey != 0) SEND_WITH_INV. */
static int do_send(struct client *c, const struct xfer *x, uint32_t inv_rkey)
{
	struct region lr[MAX_REG], rr[MAX_REG];
	struct swr s = { .op = IBV_WR_SEND };
	int flags = 0, nr, ret;
	uint64_t rid, sid;

	s.nreg = layout(lr, x->loff, x->len, x->lsge, w_send);
	s.reg = lr;
	nr = layout(rr, x->roff, x->len + x->rextra, x->rsge, w_recv);
	if (x->op == X_SEND_IMM) {
		s.op = IBV_WR_SEND_WITH_IMM;
		s.imm = imm_of(c->seed);
		flags = IBV_WC_WITH_IMM;
	} else if (inv_rkey) {
		s.op = IBV_WR_SEND_WITH_INV;
		s.imm = inv_rkey;
		flags = IBV_WC_WITH_INV;
	}
	s.flags = x->inl ? IBV_SEND_INLINE : 0;
	rid = next_wrid(c);
	if (rpc_poison(c, rr, nr) || rpc_post_recv(c, rr, nr, rid, false))
		return FAIL;
	if (post_source(c, &s, &sid) != PASS)
		return FAIL;
	ret = expect_send(c, (struct wexp[]){ wexp_ok(c, sid, IBV_WC_SEND, -1) }, 1);
	if (expect_remote_recv(c, (struct wexp[]){
		wexp_recv(c, rid, IBV_WC_RECV, x->len, flags, s.imm) }, 1) != PASS)
		ret = FAIL;
	if (rpc_check(c, rr, nr, x->len) != PASS)
		ret = FAIL;
	return ret;
}

/* RDMA_WRITE or RDMA_WRITE_WITH_IMM to the server's buffer, via rkey. */
static int do_write(struct client *c, const struct xfer *x, uint32_t rkey)
{
	struct region lr[MAX_REG], rr = { x->roff, x->len, 0 };
	struct region spare = { SPARE_OFF, 64, 0 };
	struct swr s = { .op = IBV_WR_RDMA_WRITE, .raddr = x->roff, .rkey = rkey };
	bool imm = x->op == X_WRITE_IMM;
	uint64_t rid = 0, sid;
	int ret;

	s.nreg = layout(lr, x->loff, x->len, x->lsge, w_send);
	s.reg = lr;
	s.flags = x->inl ? IBV_SEND_INLINE : 0;
	if (rpc_poison(c, &rr, 1))
		return FAIL;
	if (imm) {
		s.op = IBV_WR_RDMA_WRITE_WITH_IMM;
		s.imm = imm_of(c->seed);
		rid = next_wrid(c);
		/* The receive's buffer must stay untouched. */
		if (rpc_poison(c, &spare, 1) ||
		    rpc_post_recv(c, &spare, 1, rid, false))
			return FAIL;
	}
	if (post_source(c, &s, &sid) != PASS)
		return FAIL;
	ret = expect_send(c, (struct wexp[]){ wexp_ok(c, sid, IBV_WC_RDMA_WRITE, -1) }, 1);
	if (imm) {
		if (expect_remote_recv(c, (struct wexp[]){
			wexp_recv(c, rid, IBV_WC_RECV_RDMA_WITH_IMM, x->len,
				  IBV_WC_WITH_IMM, s.imm) }, 1) != PASS)
			ret = FAIL;
		if (rpc_check(c, &spare, 1, 0) != PASS)
			ret = fail(c, "WRITE_WITH_IMM wrote into the receive buffer");
	}
	if (rpc_check(c, &rr, 1, x->len) != PASS)
		ret = FAIL;
	return ret;
}

static int do_read(struct client *c, const struct xfer *x)
{
	struct region lr[MAX_REG], rr = { x->roff, x->len, 0 };
	struct swr s = { .op = IBV_WR_RDMA_READ, .raddr = x->roff, .rkey = c->rh.rkey };
	uint64_t sid;
	int ret;

	s.nreg = layout(lr, x->loff, x->len, x->lsge, w_send);
	s.reg = lr;
	if (rpc_fill(c, &rr, 1))
		return FAIL;
	region_poison(c->side.buf, lr, s.nreg);
	if (post_one(c, &s, &sid) != PASS)
		return FAIL;
	ret = expect_send(c, (struct wexp[]){
		wexp_ok(c, sid, IBV_WC_RDMA_READ, x->len) }, 1);
	if (check_local(c, lr, s.nreg, x->len) != PASS)
		ret = FAIL;
	return ret;
}

static int t_xfer(struct client *c, const void *arg)
{
	const struct xfer *x = arg;
	int ret;

	if (conn_get(c) != PASS)
		return FAIL;
	ret = sge_limits(c, x);
	if (ret != PASS)
		return ret;
	switch (x->op) {
	case X_SEND:
	case X_SEND_IMM:
		return do_send(c, x, 0);
	case X_WRITE:
	case X_WRITE_IMM:
		return do_write(c, x, c->rh.rkey);
	default:
		return do_read(c, x);
	}
}

/* ------------------------------------------------------------- atomics ---- */

struct atomic_case {
	uint64_t roff;
	int rounds;
};

/* One atomic; the original remote value must come back as want. */
static int do_atomic(struct client *c, enum ibv_wr_opcode op, uint64_t roff,
		     uint64_t cmp_add, uint64_t swap, uint64_t want)
{
	struct region lr = { ATOMIC_LOFF, 8, 0 };
	struct swr s = {
		.op = op, .reg = &lr, .nreg = 1, .raddr = roff, .rkey = c->rh.rkey,
		.compare_add = cmp_add, .swap = swap,
	};
	int wc_op = op == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD;
	uint64_t sid, got;
	int ret;

	region_poison(c->side.buf, &lr, 1);
	if (post_one(c, &s, &sid) != PASS)
		return FAIL;
	ret = expect_send(c, (struct wexp[]){ wexp_ok(c, sid, wc_op, 8) }, 1);
	memcpy(&got, c->side.buf + ATOMIC_LOFF, 8);
	if (ret == PASS && got != want)
		ret = fail(c, "%s at remote off %" PRIu64 " returned 0x%016" PRIx64
			   ", want 0x%016" PRIx64, wc_opcode_str(wc_op), roff, got, want);
	if (check_poison(c->side.buf, ATOMIC_LOFF - GUARD, GUARD, &got) ||
	    check_poison(c->side.buf, ATOMIC_LOFF + 8, GUARD, &got))
		ret = fail(c, "atomic result overran its 8 bytes");
	return ret;
}

static int remote_u64_is(struct client *c, uint64_t roff, uint64_t want)
{
	uint64_t v = 0;

	if (rpc_u64(c, CMD_GET64, roff, &v))
		return FAIL;
	if (v != want)
		return fail(c, "remote value at off %" PRIu64 " is 0x%016" PRIx64
			    ", want 0x%016" PRIx64, roff, v, want);
	return PASS;
}

static int t_atomic_chain(struct client *c, const void *arg)
{
	const struct atomic_case *a = arg;
	uint64_t v = ((uint64_t)mix32(c->seed) << 32) | mix32(~c->seed), nv, add;
	int r;

	if (!c->rh.atomic_ok)
		return skip(c, "the device has no atomics (atomic_cap NONE)");
	if (conn_get(c) != PASS || rpc_u64(c, CMD_SET64, a->roff, &v))
		return FAIL;
	for (r = 0; r < a->rounds; r++) {
		nv = v * 6364136223846793005ULL + 1442695040888963407ULL;
		/* A swap that happens, one that does not, an add with carries. */
		if (do_atomic(c, IBV_WR_ATOMIC_CMP_AND_SWP, a->roff, v, nv, v) != PASS)
			return FAIL;
		v = nv;
		if (do_atomic(c, IBV_WR_ATOMIC_CMP_AND_SWP, a->roff, v ^ (1ULL << r),
			      ~v, v) != PASS)
			return FAIL;
		add = 0x00000001ffffffffULL * (r + 1);
		if (do_atomic(c, IBV_WR_ATOMIC_FETCH_AND_ADD, a->roff, add, 0, v) != PASS)
			return FAIL;
		v += add;
		if (remote_u64_is(c, a->roff, v) != PASS)
			return FAIL;
	}
	return PASS;
}

/* Many FETCH_ADDs in flight at once: each sees the one before it. */
static int t_atomic_burst(struct client *c, const void *arg)
{
	enum { N = 32 };
	uint64_t roff = 4096 + 8, v = mix32(c->seed), add = 0x100000001ULL;
	struct region lr[N];
	struct swr s[N];
	struct wexp e[N];
	uint64_t ids[N], got;
	int i, ret;

	(void)arg;
	if (!c->rh.atomic_ok)
		return skip(c, "the device has no atomics (atomic_cap NONE)");
	if (conn_get(c) != PASS || rpc_u64(c, CMD_SET64, roff, &v))
		return FAIL;
	for (i = 0; i < N; i++) {
		lr[i] = (struct region){ 64 + 48 * i, 8, 0 };
		s[i] = (struct swr){
			.op = IBV_WR_ATOMIC_FETCH_AND_ADD, .reg = &lr[i], .nreg = 1,
			.raddr = roff, .rkey = c->rh.rkey, .compare_add = add,
		};
	}
	region_poison(c->side.buf, lr, N);
	if (post_chain(c, s, N, ids) != PASS)
		return FAIL;
	for (i = 0; i < N; i++)
		e[i] = wexp_ok(c, ids[i], IBV_WC_FETCH_ADD, 8);
	ret = expect_send(c, e, N);
	for (i = 0; i < N && ret == PASS; i++) {
		memcpy(&got, c->side.buf + lr[i].off, 8);
		if (got != v + i * add)
			ret = fail(c, "FETCH_ADD #%d returned 0x%" PRIx64 ", want 0x%" PRIx64,
				   i, got, v + i * add);
	}
	if (remote_u64_is(c, roff, v + N * add) != PASS)
		ret = FAIL;
	return ret;
}

/* ------------------------------------------- ATOMIC_WRITE and FLUSH ---- */

static uint32_t mtu_bytes(uint32_t mtu)
{
	return 128U << mtu;	/* IBV_MTU_256 = 1 */
}


/* Why ATOMIC_WRITE cannot be tested here, or NULL. */
static const char *no_atomic_write(struct client *c)
{
	if (!(c->side.pmem & PMEM_ATOMIC_WRITE) || !(c->rh.pmem & PMEM_ATOMIC_WRITE))
		return "no ATOMIC_WRITE (IB_UVERBS_DEVICE_ATOMIC_WRITE) on both ends";
	if (conn_get(c) == PASS && !c->conn->qpx)
		return "ibv_create_qp_ex() refused IBV_QP_EX_WITH_ATOMIC_WRITE";
	return NULL;
}

static uint64_t mix64(uint32_t seed, int i)
{
	return ((uint64_t)mix32(seed + 2 * i) << 32) | mix32(seed + 2 * i + 1);
}

/*
 * ATOMIC_WRITEs: each lands as the 8 bytes it carries, the words on
 * either side stay, the completion is IBV_WC_ATOMIC_WRITE of 8 bytes.
 */
static int t_atomic_write(struct client *c, const void *arg)
{
	const struct atomic_case *a = arg;
	struct region lr = { ATOMIC_LOFF, 8, 0 };
	struct swr s = {
		.op = IBV_WR_ATOMIC_WRITE, .reg = &lr, .nreg = 1, .raddr = a->roff,
		.rkey = c->rh.rkey,
	};
	uint64_t lo = mix64(~c->seed, 0), hi = mix64(~c->seed, 1), v, id;
	const char *why = no_atomic_write(c);
	int r;

	if (why)
		return skip(c, "%s", why);
	if (!c->conn || rpc_u64(c, CMD_SET64, a->roff - 8, &lo) ||
	    rpc_u64(c, CMD_SET64, a->roff + 8, &hi))
		return FAIL;
	for (r = 0; r < a->rounds; r++) {
		v = mix64(c->seed, r);
		memcpy(c->side.buf + ATOMIC_LOFF, &v, 8);
		if (post_one(c, &s, &id) != PASS ||
		    expect_send(c, (struct wexp[]){
				wexp_ok(c, id, IBV_WC_ATOMIC_WRITE, 8) }, 1) != PASS ||
		    remote_u64_is(c, a->roff, v) != PASS)
			return FAIL;
	}
	if (remote_u64_is(c, a->roff - 8, lo) != PASS ||
	    remote_u64_is(c, a->roff + 8, hi) != PASS)
		return fail(c, "an ATOMIC_WRITE changed the words beside it");
	return PASS;
}

/*
 * Ordering: a multi-packet RDMA_WRITE, then 8-byte RDMA_WRITEs and
 * ATOMIC_WRITEs to one word, alternating, all in flight at once; the
 * word ends as the last one wrote (arg: a WRITE or an ATOMIC_WRITE), the
 * big WRITE lands whole.  The responder places them in PSN order: an
 * ATOMIC_WRITE after the writes before it, and before those after it.
 */
static int t_atomic_write_order(struct client *c, const void *arg)
{
	enum { N = 16 };
	const bool last_write = *(const bool *)arg;
	uint64_t mtu = mtu_bytes(c->rh.mtu), word = 256 * KIB - 64, v;
	struct region big = { 320 * KIB, 3 * mtu + 100, 0 };
	struct region rbig = { 256 * KIB, 3 * mtu + 100, 0 };
	struct region lr[N + 1];
	struct swr s[N + 1];
	struct wexp e[N + 1];
	uint64_t ids[N + 1];
	const char *why = no_atomic_write(c);
	int i, n = last_write ? N - 1 : N;

	if (why)
		return skip(c, "%s", why);
	if (!c->conn || rpc_poison(c, &rbig, 1))
		return FAIL;
	region_fill(c->side.buf, &big, 1, c->seed);
	s[0] = (struct swr){ .op = IBV_WR_RDMA_WRITE, .reg = &big, .nreg = 1,
			     .raddr = rbig.off, .rkey = c->rh.rkey };
	for (i = 1; i <= n; i++) {
		lr[i] = (struct region){ 64 + 48 * i, 8, 0 };
		v = mix64(c->seed, i);
		memcpy(c->side.buf + lr[i].off, &v, 8);
		s[i] = (struct swr){
			.op = i % 2 ? IBV_WR_RDMA_WRITE : IBV_WR_ATOMIC_WRITE,
			.reg = &lr[i], .nreg = 1, .raddr = word, .rkey = c->rh.rkey,
		};
	}
	if (post_chain(c, s, n + 1, ids) != PASS)
		return FAIL;
	e[0] = wexp_ok(c, ids[0], IBV_WC_RDMA_WRITE, big.len);
	for (i = 1; i <= n; i++)
		e[i] = wexp_ok(c, ids[i], i % 2 ? IBV_WC_RDMA_WRITE : IBV_WC_ATOMIC_WRITE, 8);
	if (expect_send(c, e, n + 1) != PASS ||
	    remote_u64_is(c, word, mix64(c->seed, n)) != PASS)
		return FAIL;
	return rpc_check(c, &rbig, 1, UINT64_MAX) == PASS ? PASS : FAIL;
}

/*
 * A multi-packet RDMA_WRITE, then a FLUSH (global visibility) of what
 * it wrote, by range or of the whole MR (arg; VA and length 0 then, which
 * the responder must ignore): both complete, the FLUSH as IBV_WC_FLUSH
 * (8) with its range's length, and the data is there.
 */
static int t_flush_ok(struct client *c, const void *arg)
{
	const int level = *(const int *)arg;
	uint64_t mtu = mtu_bytes(c->rh.mtu);
	struct region lr = { 64 * KIB, 2 * mtu + 77, 0 };
	struct region rr = { 192 * KIB + 8, 2 * mtu + 77, 0 };
	struct region fr = { 0, level == FLUSH_MR ? 0 : rr.len, 0 };
	struct swr s[2] = {
		{ .op = IBV_WR_RDMA_WRITE, .reg = &lr, .nreg = 1, .raddr = rr.off,
		  .rkey = c->rh.rkey },
		{ .op = (enum ibv_wr_opcode)WR_FLUSH, .reg = &fr, .nreg = 1,
		  .raddr = level == FLUSH_MR ? 0 : c->rh.addr + rr.off,
		  .absolute = true, .rkey = c->rh.rkey, .flush_type = FLUSH_GLOBAL,
		  .flush_level = (uint8_t)level },
	};
	const char *why = no_atomic_write(c);
	uint64_t ids[2];

	if (why)
		return skip(c, "%s (FLUSH is posted as one)", why);
	if (getenv("SROCE_INTEGRITY_NO_FLUSH"))
		return skip(c, "FLUSH left out (SROCE_INTEGRITY_NO_FLUSH)");
	if (!(c->rh.pmem & PMEM_FLUSH_MR))
		return skip(c, "the server's MR has no flush access (6.1's core refuses it)");
	if (!c->conn || rpc_poison(c, &rr, 1))
		return FAIL;
	region_fill(c->side.buf, &lr, 1, c->seed);
	if (post_chain(c, s, 2, ids) != PASS ||
	    expect_send(c, (struct wexp[]){
			wexp_ok(c, ids[0], IBV_WC_RDMA_WRITE, lr.len),
			wexp_ok(c, ids[1], WC_FLUSH, fr.len) }, 2) != PASS)
		return FAIL;
	return rpc_check(c, &rr, 1, UINT64_MAX) == PASS ? PASS : FAIL;
}

/* -------------------------------------------------------------- bursts ---- */

/* Regions of varied sizes, one after the other from base. */
static int burst_regions(struct region *r, int n, uint64_t base, uint32_t mtu)
{
	uint64_t off = base;
	int i;

	for (i = 0; i < n; i++) {
		r[i].off = off;
		r[i].len = 1 + (i * 977 + (i % 3) * mtu) % (3 * mtu + 100);
		r[i].pos = (uint64_t)i << 24;
		off += r[i].len + GUARD + 5;
	}
	return n;
}


/* 32 WRITEs and then 32 READs of the same regions, all in flight at once. */
static int t_write_read_burst(struct client *c, const void *arg)
{
	enum { N = 32 };
	struct region src[N], dst[N];
	struct swr s[2 * N];
	struct wexp e[2 * N];
	uint64_t ids[2 * N];
	uint32_t mtu;
	int i;

	(void)arg;
	if (conn_get(c) != PASS)
		return FAIL;
	mtu = mtu_bytes(c->rh.mtu);
	burst_regions(src, N, 64, mtu);
	burst_regions(dst, N, 512 * KIB, mtu);
	region_poison(c->side.buf, src, N);
	region_poison(c->side.buf, dst, N);
	region_fill(c->side.buf, src, N, c->seed);
	for (i = 0; i < N; i++) {
		/* The remote copy lives at src's offsets in the server's buffer. */
		s[i] = (struct swr){ .op = IBV_WR_RDMA_WRITE, .reg = &src[i], .nreg = 1,
				     .raddr = src[i].off, .rkey = c->rh.rkey };
		s[N + i] = (struct swr){ .op = IBV_WR_RDMA_READ, .reg = &dst[i], .nreg = 1,
					 .raddr = src[i].off, .rkey = c->rh.rkey };
	}
	if (rpc_poison(c, src, N) || post_chain(c, s, 2 * N, ids) != PASS)
		return FAIL;
	for (i = 0; i < N; i++) {
		e[i] = wexp_ok(c, ids[i], IBV_WC_RDMA_WRITE, -1);
		e[N + i] = wexp_ok(c, ids[N + i], IBV_WC_RDMA_READ, dst[i].len);
	}
	if (expect_send(c, e, 2 * N) != PASS)
		return FAIL;
	if (rpc_check(c, src, N, UINT64_MAX) != PASS)
		return FAIL;
	return check_local(c, dst, N, UINT64_MAX);
}

/* 32 SENDs of varied sizes into 32 receives, all in flight at once. */
static int t_send_burst(struct client *c, const void *arg)
{
	enum { N = 32 };
	struct region src[N], dst[N];
	struct swr s[N];
	struct wexp e[N], re[N];
	uint64_t ids[N], rid;
	int i;

	(void)arg;
	if (conn_get(c) != PASS)
		return FAIL;
	burst_regions(src, N, 64, mtu_bytes(c->rh.mtu));
	burst_regions(dst, N, 600 * KIB + 7, mtu_bytes(c->rh.mtu));
	rid = next_wrid(c);
	c->wr_seq += N;
	if (rpc_poison(c, dst, N) || rpc_post_recv(c, dst, N, rid, true))
		return FAIL;
	region_poison(c->side.buf, src, N);
	region_fill(c->side.buf, src, N, c->seed);
	for (i = 0; i < N; i++)
		s[i] = (struct swr){ .op = i & 1 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				     .reg = &src[i], .nreg = 1, .imm = imm_of(c->seed + i) };
	if (post_chain(c, s, N, ids) != PASS)
		return FAIL;
	for (i = 0; i < N; i++) {
		e[i] = wexp_ok(c, ids[i], IBV_WC_SEND, -1);
		re[i] = wexp_recv(c, rid + i, IBV_WC_RECV, src[i].len,
				  i & 1 ? IBV_WC_WITH_IMM : 0, imm_of(c->seed + i));
	}
	if (expect_send(c, e, N) != PASS || expect_remote_recv(c, re, N) != PASS)
		return FAIL;
	return rpc_check(c, dst, N, UINT64_MAX);
}

/* ----------------------------------------------------- SEND_WITH_INV ---- */

static int t_send_inv(struct client *c, const void *arg)
{
	struct region mw = { MW_OFF, MW_LEN, 0 };
	struct xfer w = { .op = X_WRITE, .len = 4000, .loff = 64, .roff = MW_OFF + 100,
			  .lsge = 1 };
	struct xfer x = { .op = X_SEND, .len = 777, .loff = 8192 + 3, .roff = 64 + 5,
			  .lsge = 2, .rsge = 2 };
	struct swr s = { .op = IBV_WR_RDMA_WRITE, .raddr = MW_OFF, .reg = &mw };
	struct msg *m;
	uint64_t sid;
	uint32_t rkey;
	int ret;

	(void)arg;
	if (!(c->side.dev.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS))
		return skip(c, "no IBV_DEVICE_MEM_MGT_EXTENSIONS");
	if (!c->rh.mw_ok)
		return skip(c, "the server has no type 2 memory windows");
	if (conn_get(c) != PASS)
		return FAIL;
	m = msg_regions(c, &mw, 1);
	if (rpc(c, m, CMD_BIND_MW)) {
		/* The reason is in the diagnostics; move it to the SKIP. */
		c->dlen = 0;
		return skip(c, "cannot bind a memory window: %s", m->err);
	}
	rkey = (uint32_t)m->val;
	note(c, "memory window rkey 0x%08x", rkey);
	/* The window works, */
	if (do_write(c, &w, rkey) != PASS)
		return fail(c, "RDMA_WRITE through the memory window failed");
	/* a SEND_WITH_INV invalidates it (if the device can't: SKIP), */
	c->last_status = IBV_WC_SUCCESS;
	ret = do_send(c, &x, rkey);
	if (ret != PASS && c->last_status != IBV_WC_SUCCESS) {
		conn_drop(c);
		return skip(c, "SEND_WITH_INV completed with %s",
			    ibv_wc_status_str(c->last_status));
	}
	if (ret != PASS)
		return ret;
	/* and then the rkey is refused. */
	s.rkey = rkey;
	s.nreg = 1;
	mw.off = 64;
	mw.len = 16;
	if (post_one(c, &s, &sid) != PASS)
		return FAIL;
	ret = expect_send(c, (struct wexp[]){
		wexp_status(c, sid, IBV_WC_REM_ACCESS_ERR) }, 1);
	conn_drop(c);		/* the QP is in error now */
	return ret == PASS ? PASS : fail(c, "the invalidated rkey still works");
}

/* --------------------------------------------------- memory windows ---- */

/*
 * A memory window case is a script of steps on the server's windows and
 * the client's accesses through them.  An access that must be refused
 * (S_DENIED*, S_SEND_INV_BAD) or a bind that must fail (S_BIND_BAD) puts a
 * QP in error, so it is the last step, or an S_RECONNECT follows.
 */
enum {
	S_END,
	S_BIND,		/* bind; the rkey goes to key[k] */
	S_BIND_BAD,	/* the bind completes with IBV_WC_MW_BIND_ERR */
	S_WRITE,	/* RDMA_WRITE through key[k], data checked */
	S_READ,		/* RDMA_READ through key[k], data checked */
	S_FADD,		/* FETCH_AND_ADD through key[k], value checked */
	S_DENIED,	/* wr (an opcode) through key[k]: IBV_WC_REM_ACCESS_ERR */
	S_INV,		/* the server's LOCAL_INV of key[k] succeeds */
	S_INV_BAD,	/* it completes with IBV_WC_LOC_QP_OP_ERR */
	S_SEND_INV,	/* a SEND_WITH_INV of key[k] succeeds */
	S_SEND_INV_BAD,	/* it completes with IBV_WC_REM_INV_REQ_ERR */
	S_DEALLOC,	/* the server deallocates its window of this type */
	S_DEREG_BUSY,	/* the server's dereg of an MR with a window: EBUSY */
	S_AWRITE,	/* ATOMIC_WRITE through key[k], value checked */
	S_DENIED_VA,	/* S_DENIED at the buffer's own address, even for a
			 * zero-based window */
	S_DENIED_OUT,	/* S_DENIED outside the window, inside its MR */
	S_NOT_ON_RXE,	/* the case would upset an rdma_rxe server: skip it */
	S_RECONNECT,	/* new QPs: the server destroys its QP */
};

struct mw_step {
	uint8_t op;
	uint8_t type;		/* S_BIND*, S_DEALLOC: the window, MW_T* */
	uint8_t k;		/* which key */
	uint8_t mr;		/* S_BIND*: MW_MR_* */
	int wr;			/* S_BIND*: access flags; S_DENIED: opcode */
	uint64_t off;		/* offset in the server's buffer */
	uint64_t len;
};

#define MW_RW	(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)
#define MW_ALL	(MW_RW | IBV_ACCESS_REMOTE_ATOMIC)
#define MW_ZB	IBV_ACCESS_ZERO_BASED

/*
 * The keys of a window case, and how each addresses the server's buffer:
 * from its address, or for a zero-based window from the window's start
 * (offset off of the buffer is address off - start).
 */
struct mw_keys {
	uint32_t key[4];
	uint64_t base[4];	/* what stands for c->rh.addr with key[k] */
};

static int mw_rpc(struct client *c, const struct mw_step *st, uint32_t op,
		  uint32_t *key)
{
	struct region r = { st->off, st->len, 0 };
	struct msg *m = msg_regions(c, &r, op == MW_OP_BIND);

	m->count = op;
	m->wr_id = st->type | st->mr << 8;
	m->limit = st->wr;
	m->val = *key;
	if (rpc(c, m, CMD_MW))
		return -1;
	*key = m->val;
	return 0;
}

/* The server's bind or LOCAL_INV completed with status, as opcode. */
static int mw_wc_is(struct client *c, const char *what, int status, int opcode)
{
	const struct wwc *w = &c->m.wc[0];

	/* Refused, as it must be, but with another status: */
	if (c->rh.rxe && status != IBV_WC_SUCCESS && w->status == IBV_WC_WR_FLUSH_ERR)
		return skip(c, "rdma_rxe completes a refused bind or LOCAL_INV (here %s)"
			    " as WR_FLUSH_ERR:"
			    " rxe_req.c, rxe_requester() moves the QP to error"
			    " (rxe_qp_error()) before its completer reports the WQE, and"
			    " rxe_comp.c, rxe_completer() flushes it", what);

	if (w->status != (uint32_t)status)
		return fail(c, "%s completed with %s, want %s", what,
			    ibv_wc_status_str(w->status), ibv_wc_status_str(status));
	if (status == IBV_WC_SUCCESS && w->opcode != (uint32_t)opcode)
		return fail(c, "%s completed as %s", what, wc_opcode_str(w->opcode));
	return PASS;
}

/* An access through a window that the responder must refuse. */
static int mw_denied(struct client *c, const struct mw_step *st, uint32_t rkey)
{
	struct region lr = { 64, st->len, 0 };
	struct swr s = {
		.op = st->wr, .reg = &lr, .nreg = 1, .raddr = st->off, .rkey = rkey,
		.compare_add = 1,
	};
	uint64_t sid;
	int ret;

	if (post_one(c, &s, &sid) != PASS)
		return FAIL;
	ret = expect_send(c, (struct wexp[]){
		wexp_status(c, sid, IBV_WC_REM_ACCESS_ERR) }, 1);
	conn_drop(c);
	return ret;
}

/* A SEND_WITH_INV of a key the responder must not invalidate. */
static int mw_send_inv_bad(struct client *c, uint32_t rkey)
{
	struct region r = { 64, 100, 0 };
	struct swr s = { .op = IBV_WR_SEND_WITH_INV, .reg = &r, .nreg = 1, .imm = rkey };
	uint64_t sid;
	int ret;

	if (rpc_post_recv(c, &r, 1, next_wrid(c), false) ||
	    post_one(c, &s, &sid) != PASS)
		return FAIL;
	ret = expect_send(c, (struct wexp[]){
		wexp_status(c, sid, IBV_WC_REM_INV_REQ_ERR) }, 1);
	conn_drop(c);
	if (ret != PASS && c->rh.rxe && c->last_status == IBV_WC_SUCCESS)
		return skip(c, "rdma_rxe ACKs a SEND_WITH_INV it refuses (rxe_resp.c,"
			    " rxe_responder(): RESPST_ERR_INVALIDATE_RKEY completes the"
			    " receive in error, then goes on to RESPST_ACKNOWLEDGE, no NAK)");
	return ret;
}

/* do_read() and do_atomic() through another rkey than the MR's. */
static int mw_read_atomic(struct client *c, const struct mw_step *st, uint32_t rkey)
{
	struct xfer x = { .op = X_READ, .len = st->len, .loff = 4096 + 1,
			  .roff = st->off, .lsge = 2 };
	uint32_t mr_rkey = c->rh.rkey;
	uint64_t v = 0x1234567890abcdefULL;
	int ret;

	c->rh.rkey = rkey;
	if (st->op == S_READ)
		ret = do_read(c, &x);
	else if (st->op == S_AWRITE)
		ret = t_atomic_write(c, &(struct atomic_case){ st->off, 1 });
	else if (rpc_u64(c, CMD_SET64, st->off, &v))
		ret = FAIL;
	else
		ret = do_atomic(c, IBV_WR_ATOMIC_FETCH_AND_ADD, st->off, 5, 0, v);
	c->rh.rkey = mr_rkey;
	if (ret == PASS && st->op == S_FADD)
		ret = remote_u64_is(c, st->off, v + 5);
	return ret;
}

/* An access through key[k], at the addresses its window takes. */
static int mw_access(struct client *c, const struct mw_step *st,
		     const struct mw_keys *ks)
{
	struct xfer w = { .op = X_WRITE, .len = st->len, .loff = 64 + 3,
			  .roff = st->off, .lsge = 2 };
	uint32_t rkey = ks->key[st->k];
	uint64_t addr = c->rh.addr;
	int ret;

	if (st->op != S_DENIED_VA)
		c->rh.addr = ks->base[st->k];
	if (st->op == S_WRITE)
		ret = do_write(c, &w, rkey);
	else if (st->op == S_DENIED || st->op == S_DENIED_VA || st->op == S_DENIED_OUT)
		ret = mw_denied(c, st, rkey);
	else
		ret = mw_read_atomic(c, st, rkey);
	c->rh.addr = addr;
	return ret;
}

static int mw_step(struct client *c, const struct mw_step *st, struct mw_keys *ks)
{
	struct xfer x = { .op = X_SEND, .len = 300, .loff = 8192, .roff = 64,
			  .lsge = 1, .rsge = 1 };
	uint32_t *k = &ks->key[st->k];

	switch (st->op) {
	case S_BIND:
	case S_BIND_BAD:
		if (mw_rpc(c, st, MW_OP_BIND, k))
			return FAIL;
		note(c, "window %d rkey 0x%08x", st->type, *k);
		ks->base[st->k] = st->wr & MW_ZB ? 0 - st->off : c->rh.addr;
		return mw_wc_is(c, "the bind", st->op == S_BIND ? IBV_WC_SUCCESS :
				IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
	case S_WRITE:
	case S_READ:
	case S_FADD:
	case S_AWRITE:
	case S_DENIED:
	case S_DENIED_VA:
		return mw_access(c, st, ks);
	case S_DENIED_OUT:
		if (mw_access(c, st, ks) == PASS)
			return PASS;
		if (c->rh.rxe && c->last_status == IBV_WC_SUCCESS)
			return skip(c, "rdma_rxe lets an access through a window reach its MR"
				    " outside the window (rxe_resp.c, check_rkey():"
				    " mr_check_range() of the MR, not the window's range)");
		return FAIL;
	case S_RECONNECT:
		conn_drop(c);
		return conn_get(c);
	case S_NOT_ON_RXE:
		if (!c->rh.rxe)
			return PASS;
		return skip(c, "rdma_rxe: a bound type 2 window holds a reference on its"
			    " QP (rxe_mw.c, rxe_do_bind_mw()), so the QP's destruction times"
			    " out with a WARN (rxe_pool.c, __rxe_cleanup()) and the dealloc"
			    " then underflows the QP's refcount (rxe_mw.c, rxe_mw_cleanup())");
	case S_INV:
	case S_INV_BAD:
		if (mw_rpc(c, st, MW_OP_INV, k))
			return FAIL;
		return mw_wc_is(c, "LOCAL_INV", st->op == S_INV ? IBV_WC_SUCCESS :
				IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOCAL_INV);
	case S_SEND_INV:
		return do_send(c, &x, *k);
	case S_SEND_INV_BAD:
		return mw_send_inv_bad(c, *k);
	case S_DEALLOC:
		return mw_rpc(c, st, MW_OP_DEALLOC, k) ? FAIL : PASS;
	case S_DEREG_BUSY:
		if (mw_rpc(c, st, MW_OP_DEREG_BUSY, k))
			return FAIL;
		if (*k == EINVAL)
			printf("# accepted: the server is rdma_rxe, whose ibv_dereg_mr of an MR"
			       " with a bound window fails with EINVAL, not EBUSY"
			       " (rxe_verbs.c, rxe_dereg_mr())\n");
		return PASS;
	}
	return fail(c, "bad step %d", st->op);
}

struct mw_case {
	const char *desc;
	struct mw_step step[10];
};

/* Why the ATOMIC_WRITEs of a case cannot be tried, or NULL. */
static const char *mw_no_atomic_write(struct client *c, const struct mw_case *mc)
{
	const struct mw_step *st;

	for (st = mc->step; st->op != S_END; st++)
		if (st->op == S_AWRITE ||
		    ((st->op == S_DENIED || st->op == S_DENIED_OUT) &&
		     st->wr == IBV_WR_ATOMIC_WRITE))
			return no_atomic_write(c);
	return NULL;
}

static int t_mw(struct client *c, const void *arg)
{
	const struct mw_case *mc = arg;
	const struct mw_step *st;
	struct mw_keys ks = { { 0 }, { 0 } };
	const char *why;
	int i;

	if (!c->rh.mw_ok)
		return skip(c, "the server has no type 2 memory windows");
	if (conn_get(c) != PASS)
		return FAIL;
	why = mw_no_atomic_write(c, mc);
	if (why)
		return skip(c, "%s", why);
	for (i = 0; i < 4; i++)
		ks.base[i] = c->rh.addr;
	for (st = mc->step; st->op != S_END; st++) {
		i = mw_step(c, st, &ks);
		if (i == SKIP) {
			/* The steps before it passed; the reason goes to the SKIP. */
			c->dlen = 0;
			conn_drop(c);
			return SKIP;
		}
		if (i != PASS) {
			note(c, "at step %d", (int)(st - mc->step) + 1);
			conn_drop(c);
			return FAIL;
		}
	}
	/* The server's QP may be in error after a failed bind. */
	conn_drop(c);
	return PASS;
}

#define MW_BIND(t, k, acc, o, l)	{ S_BIND, t, k, MW_MR_MAIN, acc, o, l }
#define MW_DENY(k, op, o, l)		{ S_DENIED, 0, k, 0, op, o, l }
#define MW_OUT(k, op, o, l)		{ S_DENIED_OUT, 0, k, 0, op, o, l }
#define MW_DO(s, k, o, l)		{ s, 0, k, 0, 0, o, l }

static const struct mw_case mw_cases[] = {
	{ "type 2 window: WRITE, READ, FETCH_AND_ADD inside; WRITE across its end refused", {
		MW_BIND(2, 0, MW_ALL, MW_OFF, MW_LEN),
		MW_DO(S_WRITE, 0, MW_OFF + 100, 4000), MW_DO(S_READ, 0, MW_OFF + 8, 3000),
		MW_DO(S_FADD, 0, MW_OFF + MW_LEN - 8, 8),
		MW_OUT(0, IBV_WR_RDMA_WRITE, MW_OFF + MW_LEN - 8, 16) } },
	{ "type 1 window: WRITE, READ, FETCH_AND_ADD inside; READ before its start refused", {
		MW_BIND(1, 0, MW_ALL, MW_OFF, MW_LEN),
		MW_DO(S_WRITE, 0, MW_OFF, MW_LEN), MW_DO(S_READ, 0, MW_OFF + 5, 1000),
		MW_DO(S_FADD, 0, MW_OFF, 8),
		MW_OUT(0, IBV_WR_RDMA_READ, MW_OFF - 8, 16) } },
	{ "type 2 window, READ only: READ works, WRITE refused (the MR allows it)", {
		MW_BIND(2, 0, IBV_ACCESS_REMOTE_READ, MW_OFF, MW_LEN),
		MW_DO(S_READ, 0, MW_OFF, 512),
		MW_DENY(0, IBV_WR_RDMA_WRITE, MW_OFF, 64) } },
	{ "type 2 window without atomics: FETCH_AND_ADD refused", {
		MW_BIND(2, 0, MW_RW, MW_OFF, MW_LEN),
		MW_DENY(0, IBV_WR_ATOMIC_FETCH_AND_ADD, MW_OFF, 8) } },
	{ "type 1 window, WRITE only: READ refused", {
		MW_BIND(1, 0, IBV_ACCESS_REMOTE_WRITE, MW_OFF, MW_LEN),
		MW_DO(S_WRITE, 0, MW_OFF + 1, 77),
		MW_DENY(0, IBV_WR_RDMA_READ, MW_OFF, 64) } },
	{ "type 2 window: LOCAL_INV, then its rkey is refused", {
		MW_BIND(2, 0, MW_RW, MW_OFF, MW_LEN), MW_DO(S_WRITE, 0, MW_OFF, 100),
		MW_DO(S_INV, 0, 0, 0),
		MW_DENY(0, IBV_WR_RDMA_WRITE, MW_OFF, 64) } },
	{ "type 2 window: invalidate, rebind with a new key; the old key is refused", {
		MW_BIND(2, 0, MW_RW, MW_OFF, MW_LEN), MW_DO(S_WRITE, 0, MW_OFF, 100),
		MW_DO(S_SEND_INV, 0, 0, 0),
		MW_BIND(2, 1, MW_RW, MW_OFF + 4096, 4096),
		MW_DO(S_WRITE, 1, MW_OFF + 4096, 4096),
		MW_DENY(0, IBV_WR_RDMA_WRITE, MW_OFF + 4096, 64) } },
	{ "type 1 window: rebind with a new key and range; the old key is refused", {
		MW_BIND(1, 0, MW_RW, MW_OFF, 4096), MW_DO(S_WRITE, 0, MW_OFF, 4096),
		MW_BIND(1, 1, MW_RW, MW_OFF + 4096, 4096),
		MW_DO(S_READ, 1, MW_OFF + 4096, 4096),
		MW_DENY(0, IBV_WR_RDMA_WRITE, MW_OFF + 4096, 64) } },
	{ "type 1 window: a bind with length 0 unbinds it", {
		MW_BIND(1, 0, MW_RW, MW_OFF, MW_LEN), MW_DO(S_WRITE, 0, MW_OFF, 100),
		MW_BIND(1, 0, MW_RW, MW_OFF, 0),
		MW_DENY(0, IBV_WR_RDMA_WRITE, MW_OFF, 64) } },
	{ "type 2 window: dealloc of the bound window, then its rkey is refused", {
		MW_BIND(2, 0, MW_RW, MW_OFF, MW_LEN), MW_DO(S_WRITE, 0, MW_OFF, 100),
		{ S_DEALLOC, 2, 0, 0, 0, 0, 0 },
		MW_DENY(0, IBV_WR_RDMA_READ, MW_OFF, 64) } },
	{ "type 1 window: LOCAL_INV fails (LOC_QP_OP_ERR)", {
		MW_BIND(1, 0, MW_RW, MW_OFF, MW_LEN), MW_DO(S_INV_BAD, 0, 0, 0) } },
	{ "type 1 window: SEND_WITH_INV refused (REM_INV_REQ_ERR)", {
		MW_BIND(1, 0, MW_RW, MW_OFF, MW_LEN),
		MW_DO(S_SEND_INV_BAD, 0, 0, 0) } },
	{ "bind to an MR without MW_BIND: MW_BIND_ERR", {
		{ S_BIND_BAD, 2, 0, MW_MR_NOBIND, MW_RW, MW_OFF, MW_LEN } } },
	{ "bind past the end of the MR: MW_BIND_ERR", {
		{ S_BIND_BAD, 2, 0, MW_MR_SMALL, MW_RW, MW_OFF, MW_LEN + 1 } } },
	{ "type 1 bind before the start of the MR: MW_BIND_ERR", {
		{ S_BIND_BAD, 1, 0, MW_MR_SMALL, IBV_ACCESS_REMOTE_READ, MW_OFF - 1, 64 } } },
	{ "second bind of a bound type 2 window: MW_BIND_ERR", {
		MW_BIND(2, 0, MW_RW, MW_OFF, MW_LEN),
		{ S_BIND_BAD, 2, 1, MW_MR_MAIN, MW_RW, MW_OFF, 64 } } },
	{ "ibv_dereg_mr of an MR with a bound window: EBUSY", {
		{ S_DEREG_BUSY, 1, 0, 0, 0, 0, 0 } } },
	{ "zero-based type 2 window: WRITE at offset 0, READ to its end, FETCH_AND_ADD"
	  " of its last word; WRITE across its end refused", {
		MW_BIND(2, 0, MW_ALL | MW_ZB, MW_OFF, MW_LEN),
		MW_DO(S_WRITE, 0, MW_OFF, 4000),
		MW_DO(S_READ, 0, MW_OFF + MW_LEN - 3000, 3000),
		MW_DO(S_FADD, 0, MW_OFF + MW_LEN - 8, 8),
		MW_OUT(0, IBV_WR_RDMA_WRITE, MW_OFF + MW_LEN - 8, 16) } },
	{ "zero-based type 2 window: READ of all of it, WRITE at its end; READ just past"
	  " it refused", {
		MW_BIND(2, 0, MW_RW | MW_ZB, MW_OFF, MW_LEN),
		MW_DO(S_READ, 0, MW_OFF, MW_LEN),
		MW_DO(S_WRITE, 0, MW_OFF + MW_LEN - 100, 100),
		MW_OUT(0, IBV_WR_RDMA_READ, MW_OFF + MW_LEN, 64) } },
	{ "zero-based type 2 window: the buffer's own address (a VA window's) refused", {
		MW_BIND(2, 0, MW_RW | MW_ZB, MW_OFF, MW_LEN),
		MW_DO(S_WRITE, 0, MW_OFF + 8, 64),
		{ S_DENIED_VA, 0, 0, 0, IBV_WR_RDMA_WRITE, MW_OFF + 8, 64 } } },
	{ "type 1 window bound by a work request; a zero-based bind of it: MW_BIND_ERR", {
		MW_BIND(MW_T1_WR, 0, MW_RW, MW_OFF, MW_LEN),
		MW_DO(S_WRITE, 0, MW_OFF + 1, 1000),
		{ S_BIND_BAD, MW_T1_WR, 1, MW_MR_MAIN, MW_RW | MW_ZB, MW_OFF, MW_LEN } } },
	{ "ATOMIC_WRITE lands through a type 2 (READ, WRITE) and a type 1 (WRITE only)"
	  " window", {
		MW_BIND(2, 0, MW_RW, MW_OFF, MW_LEN),
		MW_DO(S_AWRITE, 0, MW_OFF + 64, 8),
		MW_BIND(1, 1, IBV_ACCESS_REMOTE_WRITE, MW_OFF, MW_LEN),
		MW_DO(S_AWRITE, 1, MW_OFF + MW_LEN - 8, 8) } },
	{ "type 2 window with READ and atomics, no WRITE: ATOMIC_WRITE refused", {
		MW_BIND(2, 0, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, MW_OFF,
			MW_LEN),
		MW_DO(S_FADD, 0, MW_OFF + 64, 8),
		MW_DENY(0, IBV_WR_ATOMIC_WRITE, MW_OFF + 64, 8) } },
	{ "type 1 window, READ only: ATOMIC_WRITE refused", {
		MW_BIND(1, 0, IBV_ACCESS_REMOTE_READ, MW_OFF, MW_LEN),
		MW_DENY(0, IBV_WR_ATOMIC_WRITE, MW_OFF, 8) } },
	{ "zero-based type 2 window: ATOMIC_WRITE of its last word; past its end"
	  " refused", {
		MW_BIND(2, 0, MW_RW | MW_ZB, MW_OFF, MW_LEN),
		MW_DO(S_AWRITE, 0, MW_OFF + MW_LEN - 8, 8),
		MW_OUT(0, IBV_WR_ATOMIC_WRITE, MW_OFF + MW_LEN, 8) } },
	{ "type 2 window whose QP is destroyed: its rkey is refused, it binds again"
	  " through the new QP, dealloc works", {
		MW_DO(S_NOT_ON_RXE, 0, 0, 0),
		MW_BIND(MW_T2_KEPT, 0, MW_RW, MW_OFF, MW_LEN),
		MW_DO(S_WRITE, 0, MW_OFF, 100),
		MW_DO(S_RECONNECT, 0, 0, 0),
		MW_DENY(0, IBV_WR_RDMA_WRITE, MW_OFF, 64),
		MW_DO(S_RECONNECT, 0, 0, 0),
		MW_BIND(MW_T2_KEPT, 1, MW_RW, MW_OFF, 4096),
		MW_DO(S_WRITE, 1, MW_OFF, 4096),
		{ S_DEALLOC, MW_T2_KEPT, 0, 0, 0, 0, 0 } } },
};

/* -------------------------------------------------------------- errors ---- */

static int qp_state_is_err(struct client *c)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int ret = ibv_query_qp(c->conn->qp, &a, IBV_QP_STATE, &init);

	if (ret)
		return fail(c, "ibv_query_qp: %s", strerror(ret));
	if (a.qp_state != IBV_QPS_ERR)
		return fail(c, "QP state %d after the error, want ERR (%d)",
			    a.qp_state, IBV_QPS_ERR);
	return PASS;
}

/* n receives on the local QP, to be flushed later. */
static int post_local_recvs(struct client *c, int n, uint64_t *ids)
{
	struct region r = { 700 * KIB, 256, 0 };
	int i, ret;

	for (i = 0; i < n; i++) {
		ids[i] = next_wrid(c);
		ret = post_recv(&c->side, c->conn->qp, &r, 1, ids[i]);
		if (ret)
			return fail(c, "ibv_post_recv: %s", strerror(ret));
	}
	return PASS;
}

static int expect_flushed_recvs(struct client *c, const uint64_t *ids, int n)
{
	struct wexp e[MAX_WC];
	int i;

	for (i = 0; i < n; i++)
		e[i] = wexp_status(c, ids[i], IBV_WC_WR_FLUSH_ERR);
	return expect_local(c, c->conn->rcq, "local receive queue", e, n);
}

/*
 * bad: a work request that must fail with status; after it a good WRITE
 * and a SEND that must be flushed, as must two receives; the good WRITE
 * must not have reached the server.
 */
static int error_then_flush(struct client *c, const struct swr *bad, int status)
{
	struct region lr = { 64, 100, 0 }, rr = { 128 * KIB, 100, 0 };
	struct swr s[3] = {
		*bad,
		{ .op = IBV_WR_RDMA_WRITE, .reg = &lr, .nreg = 1, .raddr = rr.off,
		  .rkey = c->rh.rkey },
		{ .op = IBV_WR_SEND, .reg = &lr, .nreg = 1 },
	};
	uint64_t ids[3], rids[2];
	int ret = PASS;

	if (post_local_recvs(c, 2, rids) != PASS || rpc_poison(c, &rr, 1))
		return FAIL;
	region_fill(c->side.buf, &lr, 1, c->seed);
	if (post_chain(c, s, 3, ids) != PASS)
		return FAIL;
	if (expect_send(c, (struct wexp[]){
		wexp_status(c, ids[0], status),
		wexp_status(c, ids[1], IBV_WC_WR_FLUSH_ERR),
		wexp_status(c, ids[2], IBV_WC_WR_FLUSH_ERR) }, 3) != PASS)
		ret = FAIL;
	if (expect_flushed_recvs(c, rids, 2) != PASS)
		ret = FAIL;
	if (qp_state_is_err(c) != PASS)
		ret = FAIL;
	if (!c->dead && rpc_check(c, &rr, 1, 0) != PASS)
		ret = fail(c, "a WRITE posted after the failed WR reached the server");
	return ret;
}

struct err_case {
	enum ibv_wr_opcode op;
	uint32_t rkey_xor;	/* spoil the rkey */
	int64_t raddr;		/* offset from the start of the server's buffer */
	uint64_t len;
	int status;
	struct qp_params params;
	int how;		/* ERR_* */
};

/* ERR_PERSIST: ERR_ACCESS by a FLUSH for persistence */
enum { ERR_ACCESS, ERR_RNR, ERR_PEER_GONE, ERR_BOGUS_QPN, ERR_PERSIST };

static int t_error(struct client *c, const void *arg)
{
	const struct err_case *ec = arg;
	/* Near the end of the server's buffer: nothing there may change. */
	struct region tail = { BUF_SIZE - 40 - 8 * KIB, 8 * KIB + 24, 0 };
	struct region lr = { 200 * KIB, ec->len, 0 };
	struct swr s = {
		.op = ec->op, .reg = &lr, .nreg = 1, .raddr = c->rh.addr + ec->raddr,
		.rkey = c->rh.rkey ^ ec->rkey_xor, .absolute = true,
		.compare_add = 1, .swap = 2,
	};
	int ret;

	const char *why;
	int how = ec->how == ERR_PERSIST ? ERR_ACCESS : ec->how;

	s.flush_type = ec->how == ERR_PERSIST ? FLUSH_PERSISTENT : 0;
	if ((ec->op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	     ec->op == IBV_WR_ATOMIC_CMP_AND_SWP) && !c->rh.atomic_ok)
		return skip(c, "the device has no atomics");
	if ((int)ec->op == WR_FLUSH && !(c->rh.pmem & PMEM_FLUSH))
		return skip(c, getenv("SROCE_INTEGRITY_NO_FLUSH") ?
			    "FLUSH left out (SROCE_INTEGRITY_NO_FLUSH)" :
			    "the server's device has no FLUSH");
	if (conn_setup(c, &ec->params, ec->how == ERR_BOGUS_QPN) != PASS)
		return FAIL;
	if (is_pmem_op(ec->op) && (why = no_atomic_write(c)))
		return skip(c, "%s", why);
	if (ec->how == ERR_PEER_GONE && rpc(c, msg_regions(c, NULL, 0), CMD_QP_DESTROY))
		return FAIL;
	if (how == ERR_ACCESS && rpc_poison(c, &tail, 1))
		return FAIL;
	region_poison(c->side.buf, &lr, 1);
	if (ec->op != IBV_WR_RDMA_READ)
		region_fill(c->side.buf, &lr, 1, c->seed);
	ret = error_then_flush(c, &s, ec->status);
	if (ec->op == IBV_WR_RDMA_READ && check_local(c, &lr, 1, 0) != PASS)
		ret = fail(c, "a failed READ wrote into the local buffer");
	if (how == ERR_ACCESS && rpc_check(c, &tail, 1, 0) != PASS)
		ret = fail(c, "a rejected request changed the server's buffer");
	conn_drop(c);
	return ret;
}

/*
 * Modify to ERR with work outstanding: receives on the local QP, SENDs
 * stuck in RNR retries (the server posts no receives and asks for long
 * RNR waits).  Every one must be flushed, in order.
 */
static int t_flush(struct client *c, const void *arg)
{
	enum { NR = 8, NS = 4 };
	struct qp_params p = default_params;
	struct region lr = { 64, 3000, 0 };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct swr s[NS];
	struct wexp e[NS];
	uint64_t ids[NS], rids[NR];
	int i, ret;

	(void)arg;
	p.min_rnr_timer = 31;	/* 491 ms */
	if (conn_setup(c, &p, false) != PASS || post_local_recvs(c, NR, rids) != PASS)
		return FAIL;
	region_fill(c->side.buf, &lr, 1, c->seed);
	for (i = 0; i < NS; i++)
		s[i] = (struct swr){ .op = IBV_WR_SEND, .reg = &lr, .nreg = 1 };
	if (post_chain(c, s, NS, ids) != PASS)
		return FAIL;
	usleep(50 * 1000);	/* let the first SEND meet its RNR NAK */
	ret = ibv_modify_qp(c->conn->qp, &a, IBV_QP_STATE);
	if (ret)
		return fail(c, "ibv_modify_qp(ERR): %s", strerror(ret));
	for (i = 0; i < NS; i++)
		e[i] = wexp_status(c, ids[i], IBV_WC_WR_FLUSH_ERR);
	ret = expect_send(c, e, NS);
	if (expect_flushed_recvs(c, rids, NR) != PASS)
		ret = FAIL;
	conn_drop(c);
	return ret;
}

/* Work posted to a QP already in ERR completes, flushed. */
static int t_post_after_err(struct client *c, const void *arg)
{
	enum { NS = 3 };
	struct region lr = { 64, 100, 0 };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct swr s[NS];
	struct wexp e[NS];
	struct wwc w;
	uint64_t ids[NS];
	int i, ret;

	(void)arg;
	if (conn_setup(c, &default_params, false) != PASS)
		return FAIL;
	ret = ibv_modify_qp(c->conn->qp, &a, IBV_QP_STATE);
	if (ret)
		return fail(c, "ibv_modify_qp(ERR): %s", strerror(ret));
	if (poll_wcs(c->conn->scq, &w, 1, 100) || poll_wcs(c->conn->rcq, &w, 1, 0))
		return fail(c, "a completion out of nowhere: wr_id 0x%" PRIx64 " status %s",
			    w.wr_id, ibv_wc_status_str(w.status));
	for (i = 0; i < NS; i++)
		s[i] = (struct swr){ .op = i == 1 ? IBV_WR_RDMA_WRITE : IBV_WR_SEND,
				     .reg = &lr, .nreg = 1, .raddr = 4096,
				     .rkey = c->rh.rkey };
	ret = post_chain(c, s, NS, ids);
	if (ret != PASS) {
		conn_drop(c);
		return ret;
	}
	for (i = 0; i < NS; i++)
		e[i] = wexp_status(c, ids[i], IBV_WC_WR_FLUSH_ERR);
	ret = expect_send(c, e, NS);
	conn_drop(c);
	return ret;
}

/* Wait for an async event of this type on the client's QP, acking others. */
static int wait_qp_event(struct client *c, enum ibv_event_type type, int ms)
{
	struct pollfd pfd = { .fd = c->side.ctx->async_fd, .events = POLLIN };
	uint64_t end = now_ms() + ms;
	struct ibv_async_event ev;
	int flags = fcntl(pfd.fd, F_GETFL);
	bool match;

	if (flags < 0 || fcntl(pfd.fd, F_SETFL, flags | O_NONBLOCK))
		return fail(c, "fcntl(async_fd): %s", strerror(errno));
	while (now_ms() < end) {
		if (poll(&pfd, 1, (int)(end - now_ms())) <= 0)
			continue;
		if (ibv_get_async_event(c->side.ctx, &ev))
			continue;
		match = ev.event_type == type && ev.element.qp == c->conn->qp;
		if (!match)
			note(c, "async event %s while waiting", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		if (match)
			return PASS;
	}
	return fail(c, "no %s event within %d ms", ibv_event_type_str(type), ms);
}

/*
 * SQD: the WRITEs posted before the move complete, then the SQ_DRAINED
 * event comes; a WRITE posted in SQD waits there and goes once the QP is
 * back in RTS.  Every byte written is checked.
 */
static int t_sqd(struct client *c, const void *arg)
{
	enum { NS = 4, LEN = 6000, STRIDE = 8192 };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	struct region lr = { 0, LEN, 0 }, rr[NS + 1];
	struct swr s[NS + 1];
	struct wexp e[NS];
	uint64_t ids[NS + 1];
	struct wwc w;
	int i, ret, err;

	(void)arg;
	/*
	 * rdma_rxe, the interop client, reports the drain only when its
	 * requester happens to run after the move to SQD (never, here).
	 */
	if (c->side.rxe)
		return skip(c, "rdma_rxe does not report SQ_DRAINED reliably");
	if (conn_setup(c, &default_params, false) != PASS)
		return FAIL;
	for (i = 0; i <= NS; i++) {
		rr[i] = (struct region){ STRIDE * (i + 1), LEN, 0 };
		s[i] = (struct swr){ .op = IBV_WR_RDMA_WRITE, .reg = &lr, .nreg = 1,
				     .raddr = rr[i].off, .rkey = c->rh.rkey };
	}
	ret = rpc_poison(c, rr, NS + 1) ? FAIL : PASS;
	region_fill(c->side.buf, &lr, 1, c->seed);
	if (ret == PASS)
		ret = post_chain(c, s, NS, ids);
	if (ret == PASS) {
		err = ibv_modify_qp(c->conn->qp, &a,
				    IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY);
		if (err)
			ret = fail(c, "ibv_modify_qp(SQD): %s", strerror(err));
	}
	for (i = 0; i < NS; i++)
		e[i] = wexp_ok(c, ids[i], IBV_WC_RDMA_WRITE, -1);
	if (ret == PASS)
		ret = expect_send(c, e, NS);
	if (ret == PASS)
		ret = wait_qp_event(c, IBV_EVENT_SQ_DRAINED, 5000);
	if (ret == PASS)
		ret = post_chain(c, &s[NS], 1, &ids[NS]);
	if (ret == PASS && poll_wcs(c->conn->scq, &w, 1, 200) > 0)
		ret = fail(c, "a WRITE posted in SQD completed in SQD");
	a.qp_state = IBV_QPS_RTS;
	if (ret == PASS) {
		err = ibv_modify_qp(c->conn->qp, &a, IBV_QP_STATE);
		if (err)
			ret = fail(c, "ibv_modify_qp(SQD->RTS): %s", strerror(err));
	}
	if (ret == PASS)
		ret = expect_send(c, (struct wexp[]){
			wexp_ok(c, ids[NS], IBV_WC_RDMA_WRITE, -1) }, 1);
	if (ret == PASS)
		ret = rpc_check(c, rr, NS + 1, LEN);
	conn_drop(c);
	return ret;
}

static void print_diag(const char *text)
{
	const char *p = text, *nl;

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		printf("# %.*s\n", (int)(nl - p), p);
		p = *nl ? nl + 1 : nl;
	}
}

/* -------------------------------------------------------------- soak ---- */

/*
 * --soak BYTES: RDMA_WRITE, RDMA_READ and SEND in turn, a third of the
 * bytes each, on one RC QP, until BYTES have been moved and checked.  A
 * round posts a chain of up to SOAK_MSGS messages of 4 KiB..1 MiB (sizes
 * log-uniform, odd lengths and offsets too), placed one after another in
 * both buffers with poisoned guards between them, and checks every byte
 * of every destination region, and every guard, once the round is done.
 * Each round has its own seed.  A round that fails (a completion or a
 * byte wrong, or a wait in vain) is reported, and the soak goes on with a
 * fresh QP pair, up to SOAK_GIVE_UP failures; the case fails if any did.
 */
#define SOAK_MIN	(4 * KIB)
#define SOAK_MAX	MIB
#define SOAK_MSGS	16
#define SOAK_GIVE_UP	20

enum { SOAK_WRITE, SOAK_READ, SOAK_SEND, SOAK_NOPS };

static const char *const soak_name[] = { "RDMA_WRITE", "RDMA_READ", "SEND" };

struct soak {
	uint64_t rng;
	uint64_t bytes[SOAK_NOPS];
	uint64_t msgs[SOAK_NOPS];
	uint32_t failed[SOAK_NOPS];	/* rounds */
	uint64_t done;
	uint32_t round;
};

/* xorshift64*: the sizes and offsets of the rounds, from the seed. */
static uint32_t soak_rand(struct soak *k)
{
	k->rng ^= k->rng >> 12;
	k->rng ^= k->rng << 25;
	k->rng ^= k->rng >> 27;
	return (uint32_t)((k->rng * 0x2545f4914f6cdd1dULL) >> 32);
}

/*
 * The messages of one round: lr[i] in our buffer goes to (or comes from)
 * rr[i] in the server's; both carry stream bytes [pos, pos + len).
 * Returns the message count.
 */
static int soak_layout(struct soak *k, struct region *lr, struct region *rr)
{
	uint64_t loff = GUARD + soak_rand(k) % 4096;
	uint64_t roff = GUARD + soak_rand(k) % 4096;
	uint64_t pos = 0, len, room, unit;
	int n = 0;

	while (n < SOAK_MSGS) {
		unit = SOAK_MIN << (soak_rand(k) % 9);
		len = MIN(unit + soak_rand(k) % unit, SOAK_MAX);
		room = BUF_SIZE - GUARD - MAX(loff, roff);
		if (MAX(loff, roff) + GUARD >= BUF_SIZE || len > room) {
			if (n)
				break;
			len = room;
		}
		lr[n] = (struct region){ loff, len, pos };
		rr[n] = (struct region){ roff, len, pos };
		pos += len;
		loff += len + GUARD + soak_rand(k) % 64;
		roff += len + GUARD + soak_rand(k) % 64;
		n++;
	}
	return n;
}

/* One round of op over n messages; every destination byte checked. */
static int soak_round(struct client *c, int op, const struct region *lr,
		      const struct region *rr, int n)
{
	static const enum ibv_wr_opcode wr_op[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_SEND,
	};
	static const int wc_op[] = { IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ, IBV_WC_SEND };
	struct swr s[SOAK_MSGS];
	struct wexp e[SOAK_MSGS];
	uint64_t ids[SOAK_MSGS], rid = 0;
	int i, ret;

	for (i = 0; i < n; i++)
		s[i] = (struct swr){ .op = wr_op[op], .reg = &lr[i], .nreg = 1,
				     .raddr = rr[i].off, .rkey = c->rh.rkey };
	switch (op) {
	case SOAK_WRITE:
		region_fill(c->side.buf, lr, n, c->seed);
		if (rpc_poison(c, rr, n))
			return FAIL;
		break;
	case SOAK_READ:
		if (rpc_fill(c, rr, n))
			return FAIL;
		region_poison(c->side.buf, lr, n);
		break;
	default:
		rid = next_wrid(c);
		c->wr_seq += n;		/* rid .. rid + n - 1 */
		if (rpc_poison(c, rr, n) || rpc_post_recv(c, rr, n, rid, true))
			return FAIL;
		region_fill(c->side.buf, lr, n, c->seed);
		break;
	}
	if (post_chain(c, s, n, ids) != PASS)
		return FAIL;
	for (i = 0; i < n; i++)
		e[i] = wexp_ok(c, ids[i], wc_op[op], op == SOAK_READ ? (int64_t)lr[i].len : -1);
	ret = expect_send(c, e, n);
	if (op == SOAK_SEND) {
		for (i = 0; i < n; i++)
			e[i] = wexp_recv(c, rid + i, IBV_WC_RECV, rr[i].len, 0, 0);
		if (expect_remote_recv(c, e, n) != PASS)
			ret = FAIL;
	}
	/* A message that failed left its region part-written: no news there. */
	if (ret != PASS)
		return fail(c, "data not checked: the completions were wrong");
	if (op == SOAK_READ) {
		if (check_local(c, lr, n, UINT64_MAX) != PASS)
			ret = FAIL;
	} else if (rpc_check(c, rr, n, UINT64_MAX) != PASS) {
		ret = FAIL;
	}
	return ret;
}

static double mb_per_s(uint64_t bytes, uint64_t ms)
{
	return ms ? bytes / 1e3 / ms : 0;
}

/* Say what went wrong in a round, then start over on a fresh QP pair. */
static int soak_failed(struct client *c, struct soak *k, int op,
		       const struct region *lr, const struct region *rr, int n,
		       uint64_t t0)
{
	char sizes[512];
	size_t l = 0;
	int i;

	sizes[0] = 0;
	for (i = 0; i < n && l < sizeof(sizes) - 64; i++)
		l += snprintf(sizes + l, sizeof(sizes) - l, "%s%" PRIu64 "@%" PRIu64
			      "->%" PRIu64, i ? " " : "", lr[i].len, lr[i].off, rr[i].off);
	k->failed[op]++;
	printf("# soak: failure %u: round %u, %s of %d messages (len@local->remote:"
	       " %s), round seed 0x%08x, after %" PRIu64 " bytes, at %" PRIu64 " ms:\n",
	       k->failed[0] + k->failed[1] + k->failed[2], k->round, soak_name[op], n,
	       sizes, c->seed, k->done, now_ms() - t0);
	print_diag(c->diag);
	c->dlen = 0;
	c->diag[0] = 0;
	if (c->dead)
		return FAIL;
	return conn_setup(c, &c->params, false);
}

static int t_soak(struct client *c, const void *arg)
{
	const struct opts *o = c->o;
	struct region lr[SOAK_MSGS], rr[SOAK_MSGS];
	struct soak k = { .rng = ((uint64_t)o->seed << 32) | mix32(o->seed) | 1 };
	uint64_t t0 = now_ms(), step_at = o->soak_step, ms;
	uint32_t nfail = 0;
	struct qp_params params = default_params;
	int op = SOAK_NOPS - 1, n, i;

	(void)arg;
	if (o->qp_timeout >= 0)
		params.timeout = o->qp_timeout;
	if (conn_setup(c, &params, false) != PASS)
		return FAIL;
	for (k.round = 0; k.done < o->soak_bytes; k.round++) {
		/* The next operation of those asked for, in turn. */
		do
			op = (op + 1) % SOAK_NOPS;
		while (!(o->soak_ops & (1 << op)));
		c->seed = mix32(o->seed ^ mix32(k.round + 0x50a6));
		n = soak_layout(&k, lr, rr);
		if (soak_round(c, op, lr, rr, n) != PASS) {
			nfail = k.failed[0] + k.failed[1] + k.failed[2] + 1;
			if (soak_failed(c, &k, op, lr, rr, n, t0) != PASS ||
			    nfail >= SOAK_GIVE_UP) {
				note(c, "soak: gave up after failure %u", nfail);
				break;
			}
			continue;
		}
		for (i = 0; i < n; i++)
			k.bytes[op] += lr[i].len;
		k.msgs[op] += n;
		k.done = k.bytes[0] + k.bytes[1] + k.bytes[2];
		if (k.done >= step_at || k.done >= o->soak_bytes) {
			ms = now_ms() - t0;
			printf("# soak: %" PRIu64 " bytes checked, %" PRIu64 " messages,"
			       " %" PRIu64 " ms, %.2f MB/s\n", k.done,
			       k.msgs[0] + k.msgs[1] + k.msgs[2], ms, mb_per_s(k.done, ms));
			while (step_at <= k.done)
				step_at += o->soak_step;
		}
	}
	ms = now_ms() - t0;
	nfail = k.failed[0] + k.failed[1] + k.failed[2];
	printf("# soak: %s: %" PRIu64 " bytes in %" PRIu64 " ms (%.2f MB/s), %u rounds,"
	       " %u failed;", k.done >= o->soak_bytes ? "done" : "stopped", k.done, ms,
	       mb_per_s(k.done, ms), k.round, nfail);
	for (op = 0; op < SOAK_NOPS; op++)
		printf(" %s %" PRIu64 " bytes in %" PRIu64 " messages (%u rounds failed)%s",
		       soak_name[op], k.bytes[op], k.msgs[op], k.failed[op],
		       op < SOAK_NOPS - 1 ? "," : "\n");
	if (nfail)
		return fail(c, "%u rounds failed (see \"# soak: failure\" above)", nfail);
	return PASS;
}

/* ------------------------------------------------------------- runner ---- */

typedef int (*case_fn)(struct client *c, const void *arg);

static __attribute__((format(printf, 4, 5)))
void run_case(struct client *c, case_fn fn, const void *arg, const char *fmt, ...)
{
	char desc[256];
	uint64_t t0 = now_ms();
	va_list ap;
	int ret;

	if (c->timeouts_in_a_row >= GIVE_UP)
		return;
	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	c->timed_out = false;
	c->dlen = 0;
	c->diag[0] = 0;
	c->skip[0] = 0;
	c->case_no++;
	c->seed = mix32(c->o->seed ^ mix32(c->case_no));
	ret = fn(c, arg);
	c->tap_n++;
	if (ret == PASS) {
		printf("ok %d - %s\n", c->tap_n, desc);
	} else if (ret == SKIP) {
		c->n_skip++;
		printf("ok %d - %s # SKIP %s\n", c->tap_n, desc, c->skip);
	} else {
		c->n_fail++;
		printf("not ok %d - %s\n", c->tap_n, desc);
		print_diag(c->diag);
		printf("# case seed 0x%08x, %" PRIu64 " ms\n", c->seed, now_ms() - t0);
		conn_drop(c);	/* the next case starts afresh */
	}
	c->timeouts_in_a_row = ret == FAIL && c->timed_out ? c->timeouts_in_a_row + 1 : 0;
	if (c->o->verbose && ret != FAIL && c->dlen)
		print_diag(c->diag);
	if (c->o->verbose)
		printf("# %" PRIu64 " ms\n", now_ms() - t0);
	fflush(stdout);
}

/* Start offsets: aligned, odd, crossing a page, page-aligned. */
static const uint64_t offsets[] = { 64, 17, 4093, 4096, 2049, 8191, 4000 + 5 };

static int sizes_for(const struct client *c, uint64_t *s)
{
	uint64_t mtu = mtu_bytes(c->rh.mtu);
	const uint64_t full[] = {
		0, 1, 2, 3, 7, 8, 63, 64, 65, mtu - 1, mtu, mtu + 1, 2 * mtu - 1,
		2 * mtu + 1, 3 * mtu, 4095, 4096, 4097, 5 * mtu + 7, 12345,
		65535, 65536, 100003, MIB,
	};
	const uint64_t quick[] = {
		0, 1, 7, 65, mtu - 1, mtu, mtu + 1, 3 * mtu + 1, 4097, 65536, MIB,
	};
	const uint64_t *src = c->o->quick ? quick : full;
	int n = c->o->quick ? (int)ARRAY_SIZE(quick) : (int)ARRAY_SIZE(full);

	memcpy(s, src, n * sizeof(*s));
	return n;
}

static void run_basic(struct client *c)
{
	uint64_t sizes[32];
	int n = sizes_for(c, sizes), i, op;
	struct xfer x;

	for (i = 0; i < n; i++) {
		for (op = 0; op < X_NOPS; op++) {
			x = (struct xfer){
				.op = op, .len = sizes[i], .lsge = 1, .rsge = 1,
				.loff = offsets[(i + op) % ARRAY_SIZE(offsets)],
				.roff = offsets[(i * 3 + op + 1) % ARRAY_SIZE(offsets)],
				.rextra = i % 3 == 1 ? 13 : 0,
			};
			run_case(c, t_xfer, &x, "%s %" PRIu64 " bytes, local off %" PRIu64
				 ", remote off %" PRIu64, xop_name[op], x.len, x.loff, x.roff);
		}
	}
}

static void run_sge(struct client *c)
{
	uint64_t mtu = mtu_bytes(c->rh.mtu);
	const uint64_t full[] = { 4, 65, mtu + 1, 3 * mtu + 5, 65536 + 3, MIB - 1 };
	const uint64_t quick[] = { 65, 3 * mtu + 5, 65536 + 3 };
	const uint64_t *sizes = c->o->quick ? quick : full;
	int n = c->o->quick ? (int)ARRAY_SIZE(quick) : (int)ARRAY_SIZE(full);
	static const int lsge[X_NOPS] = { 3, 4, 4, 3, 3 };
	static const int rsge[X_NOPS] = { 4, 3, 1, 1, 1 };
	struct xfer x;
	int i, op;

	for (i = 0; i < n; i++) {
		for (op = 0; op < X_NOPS; op++) {
			x = (struct xfer){
				.op = op, .len = sizes[i], .lsge = lsge[op],
				.rsge = rsge[op], .loff = offsets[(i + op + 1) % 4],
				.roff = offsets[(i + 2 * op) % 4], .rextra = i & 1 ? 0 : 29,
			};
			run_case(c, t_xfer, &x, "%s %" PRIu64 " bytes, %d local SGEs%s",
				 xop_name[op], x.len, x.lsge,
				 op < X_WRITE ? ", 4/3 receive SGEs" : "");
		}
	}
}

static void run_inline(struct client *c)
{
	uint32_t mi;
	uint64_t sizes[4];
	struct xfer x;
	int i, op;

	if (conn_get(c) != PASS) {
		run_case(c, t_xfer, &(struct xfer){ .op = X_SEND, .inl = true,
			 .len = 1, .lsge = 1, .rsge = 1, .loff = 64, .roff = 64 },
			 "inline SEND (no QP)");
		return;
	}
	mi = c->conn->max_inline;
	printf("# max_inline_data %u\n", mi);
	if (!mi) {
		c->tap_n++;
		c->n_skip++;
		printf("ok %d - inline data # SKIP max_inline_data is 0\n", c->tap_n);
		return;
	}
	sizes[0] = 1;
	sizes[1] = MIN(63, mi);
	sizes[2] = mi > 1 ? mi - 1 : 1;
	sizes[3] = mi;
	for (i = 0; i < 4; i++) {
		for (op = 0; op < X_READ; op++) {
			x = (struct xfer){
				.op = op, .len = sizes[i], .inl = true, .rsge = 1,
				.lsge = i == 3 ? 3 : 1, .loff = offsets[i + 1],
				.roff = offsets[op], .rextra = 3,
			};
			run_case(c, t_xfer, &x, "inline %s %" PRIu64 " bytes, %d SGEs",
				 xop_name[op], x.len, x.lsge);
		}
	}
}

static void run_atomic_write(struct client *c)
{
	static const uint64_t roffs[] = { 64, 4096 - 8, 8192 + 24 };
	static const bool last_write = true, last_atomic = false;
	static const int range = FLUSH_RANGE, mr = FLUSH_MR;
	struct atomic_case a;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(roffs); i++) {
		a = (struct atomic_case){ roffs[i], c->o->quick ? 2 : 4 };
		run_case(c, t_atomic_write, &a,
			 "ATOMIC_WRITE, %d rounds, remote off %" PRIu64 ": the 8 bytes land",
			 a.rounds, a.roff);
	}
	run_case(c, t_atomic_write_order, &last_atomic,
		 "RDMA_WRITE, then 8-byte WRITEs and ATOMIC_WRITEs to one word in flight:"
		 " the last (ATOMIC_WRITE) wins");
	run_case(c, t_atomic_write_order, &last_write,
		 "RDMA_WRITE, then 8-byte WRITEs and ATOMIC_WRITEs to one word in flight:"
		 " the last (RDMA_WRITE) wins");
	run_case(c, t_flush_ok, &range, "RDMA_WRITE then FLUSH (global, range) of it");
	run_case(c, t_flush_ok, &mr, "RDMA_WRITE then FLUSH (global, whole MR)");
}

static void run_atomic(struct client *c)
{
	static const uint64_t roffs[] = { 64, 4096 - 8, 8192 + 24 };
	struct atomic_case a;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(roffs); i++) {
		a = (struct atomic_case){ roffs[i], c->o->quick ? 2 : 4 };
		run_case(c, t_atomic_chain, &a,
			 "CMP_AND_SWP / FETCH_AND_ADD chain, %d rounds, remote off %" PRIu64,
			 a.rounds, a.roff);
	}
	run_case(c, t_atomic_burst, NULL, "32 FETCH_AND_ADDs in flight");
	run_atomic_write(c);
}

static void run_burst(struct client *c)
{
	run_case(c, t_write_read_burst, NULL, "32 RDMA_WRITEs then 32 RDMA_READs in flight");
	run_case(c, t_send_burst, NULL, "32 SENDs (half WITH_IMM) in flight");
}

static void run_mw(struct client *c)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mw_cases); i++)
		run_case(c, t_mw, &mw_cases[i], "%s", mw_cases[i].desc);
}

static void run_errors(struct client *c)
{
	const struct qp_params fast = fast_params;
	const uint64_t end = BUF_SIZE;
	uint64_t mtu = mtu_bytes(c->rh.mtu);
	const struct {
		struct err_case ec;
		const char *desc;
	} cases[] = {
		{ { IBV_WR_RDMA_WRITE, 0xa5a500, 4096, 100, IBV_WC_REM_ACCESS_ERR,
		    default_params, ERR_ACCESS }, "RDMA_WRITE with a bad rkey" },
		{ { IBV_WR_RDMA_READ, 0x1, 4096, 100, IBV_WC_REM_ACCESS_ERR,
		    default_params, ERR_ACCESS }, "RDMA_READ with a bad rkey (key byte)" },
		{ { IBV_WR_ATOMIC_FETCH_AND_ADD, 0xa5a500, 4096, 8, IBV_WC_REM_ACCESS_ERR,
		    default_params, ERR_ACCESS }, "FETCH_AND_ADD with a bad rkey" },
		{ { IBV_WR_RDMA_WRITE, 0, end - 8, 16, IBV_WC_REM_ACCESS_ERR,
		    default_params, ERR_ACCESS }, "RDMA_WRITE past the end of the MR" },
		{ { IBV_WR_RDMA_WRITE, 0, end - mtu, 2 * mtu + 1, IBV_WC_REM_ACCESS_ERR,
		    default_params, ERR_ACCESS }, "multi-packet RDMA_WRITE past the end of the MR" },
		{ { IBV_WR_RDMA_READ, 0, end - 8, 16, IBV_WC_REM_ACCESS_ERR,
		    default_params, ERR_ACCESS }, "RDMA_READ past the end of the MR" },
		{ { IBV_WR_RDMA_READ, 0, -8, 16, IBV_WC_REM_ACCESS_ERR,
		    default_params, ERR_ACCESS }, "RDMA_READ from before the start of the MR" },
		{ { IBV_WR_ATOMIC_WRITE, 0xa5a500, 4096, 8, IBV_WC_REM_ACCESS_ERR,
		    default_params, ERR_ACCESS }, "ATOMIC_WRITE with a bad rkey" },
		{ { IBV_WR_ATOMIC_WRITE, 0, end, 8, IBV_WC_REM_ACCESS_ERR,
		    default_params, ERR_ACCESS }, "ATOMIC_WRITE past the end of the MR" },
		{ { (enum ibv_wr_opcode)WR_FLUSH, 0, end - 8, 16, IBV_WC_REM_ACCESS_ERR,
		    default_params, ERR_ACCESS }, "FLUSH of a range past the end of the MR" },
		{ { (enum ibv_wr_opcode)WR_FLUSH, 0xa5a500, 4096, 16, IBV_WC_REM_ACCESS_ERR,
		    default_params, ERR_ACCESS }, "FLUSH with a bad rkey" },
		{ { (enum ibv_wr_opcode)WR_FLUSH, 0, 4096, 16, IBV_WC_REM_ACCESS_ERR,
		    default_params, ERR_PERSIST },
		  "FLUSH for persistence (no MR grants it)" },
		{ { IBV_WR_SEND, 0, 0, 100, IBV_WC_RNR_RETRY_EXC_ERR, fast, ERR_RNR },
		  "SEND with no receive posted, rnr_retry 0" },
		{ { IBV_WR_RDMA_WRITE, 0, 4096, 100, IBV_WC_RETRY_EXC_ERR, fast,
		    ERR_PEER_GONE }, "RDMA_WRITE to a destroyed QP, retry_cnt 1" },
		{ { IBV_WR_SEND, 0, 0, 100, IBV_WC_RETRY_EXC_ERR, fast, ERR_BOGUS_QPN },
		  "SEND to a QP number nobody has, retry_cnt 1" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		run_case(c, t_error, &cases[i].ec, "%s: %s, the rest flushed",
			 cases[i].desc, ibv_wc_status_str(cases[i].ec.status));
	run_case(c, t_flush, NULL, "modify to ERR: outstanding SENDs and receives flushed");
	run_case(c, t_post_after_err, NULL, "SENDs/WRITEs posted in ERR are flushed");
	run_case(c, t_sqd, NULL, "SQD: the SQ drains, SQ_DRAINED, a WRITE waits for RTS");
}

static void print_header(struct client *c)
{
	char gid[INET6_ADDRSTRLEN], rgid[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, c->side.gid.raw, gid, sizeof(gid));
	inet_ntop(AF_INET6, c->rh.gid, rgid, sizeof(rgid));
	printf("# sroce_integrity: %s, device %s port %d gid[%d] %s, active_mtu %u\n",
	       c->lo ? "loopback" : "client", ibv_get_device_name(c->side.ctx->device),
	       c->side.ib_port, c->side.gid_idx, gid, mtu_bytes(c->side.port.active_mtu));
	printf("# server gid %s mtu %u, seed 0x%08x%s\n", rgid, mtu_bytes(c->rh.mtu),
	       c->o->seed, c->o->quick ? ", quick" : "");
	if (c->o->soak_bytes)
		printf("# soak %" PRIu64 " bytes, QP timeout %u retry_cnt %u rnr_retry %u,"
		       " waits of %d s\n", c->o->soak_bytes, c->o->qp_timeout >= 0 ?
		       (unsigned int)c->o->qp_timeout : default_params.timeout,
		       default_params.retry_cnt, default_params.rnr_retry, c->o->wait_ms / 1000);
	if (!c->side.gid.global.interface_id && !c->side.gid.global.subnet_prefix)
		printf("# warning: gid[%d] is all zeroes\n", c->side.gid_idx);
	if (c->side.rxe || c->rh.rxe)
		printf("# rdma_rxe: the client's device %s, the server's %s\n",
		       c->side.rxe ? "is" : "is not", c->rh.rxe ? "is" : "is not");
}

static int client_main(const struct opts *o)
{
	struct client *c = calloc(1, sizeof(*c));
	struct server *lo = NULL;
	int ret;

	if (!c)
		return 2;
	c->o = o;
	c->fd = -1;
	if (side_open(&c->side, o))
		return 2;
	if (o->loopback) {
		lo = calloc(1, sizeof(*lo));
		if (!lo || side_open(&lo->side, o))
			return 2;
		c->lo = lo;
	} else {
		c->fd = tcp_connect(o->host, o->tcp_port);
		if (c->fd < 0)
			return 2;
	}
	if (rpc(c, msg_regions(c, NULL, 0), CMD_HELLO)) {
		fprintf(stderr, "%s", c->diag);
		return 2;
	}
	c->rh = c->m.hello;
	/*
	 * SROCE_INTEGRITY_NO_FLUSH=1: treat the server as having no FLUSH
	 * (the interop pairs: sroce's FLUSH to rdma_rxe 6.12 ends in
	 * RETRY_EXC, not yet understood; its cases skip saying why).
	 */
	if (getenv("SROCE_INTEGRITY_NO_FLUSH"))
		c->rh.pmem &= ~(PMEM_FLUSH | PMEM_FLUSH_MR);
	print_header(c);

	if (o->soak_bytes) {
		run_case(c, t_soak, NULL, "soak: %" PRIu64 " bytes of RDMA_WRITE, RDMA_READ"
			 " and SEND, 4 KiB..1 MiB messages, every byte checked",
			 o->soak_bytes);
		goto out;
	}
	if (o->groups & G_BASIC)
		run_basic(c);
	if (o->groups & G_SGE)
		run_sge(c);
	if (o->groups & G_INLINE)
		run_inline(c);
	if (o->groups & G_ATOMIC)
		run_atomic(c);
	if (o->groups & G_BURST)
		run_burst(c);
	if (o->groups & G_INV) {
		run_case(c, t_send_inv, NULL,
			 "SEND_WITH_INV invalidates a type 2 memory window");
		run_mw(c);
	}
	if (o->groups & G_ERROR)
		run_errors(c);
out:
	conn_drop(c);
	if (!c->dead)
		rpc(c, msg_regions(c, NULL, 0), CMD_QUIT);
	if (c->timeouts_in_a_row >= GIVE_UP) {
		printf("Bail out! %d cases in a row timed out; the device does not"
		       " seem to work\n", GIVE_UP);
		c->n_fail++;
	} else {
		printf("1..%d\n", c->tap_n);
	}
	printf("# %d passed, %d failed, %d skipped\n",
	       c->tap_n - c->n_fail - c->n_skip, c->n_fail, c->n_skip);
	ret = c->n_fail ? 1 : 0;
	if (lo) {
		server_drop_conn(lo);
		side_close(&lo->side);
		free(lo);
	}
	if (c->fd >= 0)
		close(c->fd);
	side_close(&c->side);
	free(c);
	return ret;
}

/* --------------------------------------------------------------- main ---- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: sroce_integrity -l [OPTION]...          loopback on one device\n"
"       sroce_integrity -s [OPTION]...          server\n"
"       sroce_integrity -c HOST [OPTION]...     client (runs the tests)\n"
"\n"
"A data-integrity test of reliable-connected (RC) QPs over RoCEv2: SEND,\n"
"SEND_WITH_IMM, SEND_WITH_INV, RDMA_WRITE(_WITH_IMM), RDMA_READ and the\n"
"two atomics, over many sizes, offsets and SGE splits, inline; every byte\n"
"and every completion field is checked; memory windows of type 1 and 2\n"
"(group inv: binds, accesses, invalidation, rebinds, bind errors);\n"
"then error cases (bad rkey, out of\n"
"bounds, RNR, peer gone, flushes).  The client prints TAP on stdout and\n"
"exits 0 only if every case passed.  Both ends must run the same binary.\n"
"\n"
"  -l, --loopback      two QPs on one device, connected to each other\n"
"  -s, --server        serve one client, then exit\n"
"  -c, --client HOST   connect to the server on HOST (name, IPv4 or IPv6)\n"
"  -d, --dev DEV       RDMA device (default: the first one)\n"
"  -i, --ib-port N     its port (default 1)\n"
"  -g, --gid-index N   source GID index, a RoCE v2 GID (default 0)\n"
"  -p, --port N        TCP port of the control connection (default %d)\n"
"  -q, --quick         fewer sizes and rounds\n"
"  -S, --seed N        pattern seed (default: from the time; printed)\n"
"  -t, --tests LIST    comma-separated groups: basic,sge,inline,atomic,\n"
"                      burst,inv,error (default: all)\n"
"  -v, --verbose       timing and notes for every case\n"
"  -C, --self-check    test the checker: spoil one byte before every data\n"
"                      check, so that every data case must fail\n"
"  -B, --soak BYTES    instead of the groups: RDMA_WRITE, RDMA_READ and SEND\n"
"                      in turn, chains of 4 KiB..1 MiB messages, until BYTES\n"
"                      (suffix K, M or G) are moved, every byte checked\n"
"  -P, --progress BYTES  with --soak: a \"# soak:\" line per BYTES (16M)\n"
"  -O, --soak-ops LIST  with --soak: of write,read,send (default all three)\n"
"  -T, --qp-timeout N  with --soak: the QPs' local ACK timeout (4.096 us << N;\n"
"                      default 14, 67 ms)\n"
"  -W, --wait SEC      the deadline of a completion wait (default %d)\n"
"      --rxe WHEN      the local device is rdma_rxe: yes, no or auto (default:\n"
"                      rxe's sysfs attribute \"parent\"); a server on rxe\n"
"                      tells the client, which then accepts rxe's known\n"
"                      deviations (a \"# accepted:\" line says which)\n"
"  -h, --help          this text\n"
"\n"
"Example, two hosts:  server: sroce_integrity -s -d sroce0 -g 1\n"
"                     client: sroce_integrity -c 10.0.0.2 -d sroce0 -g 1\n",
		DEFAULT_TCP_PORT, WAIT_MS / 1000);
}

static int parse_groups(const char *s, unsigned int *groups)
{
	char *copy = strdup(s), *tok, *save = NULL;
	unsigned int i;

	if (!copy)
		return -1;
	*groups = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < ARRAY_SIZE(group_names); i++)
			if (!strcmp(tok, group_names[i].name))
				break;
		if (i == ARRAY_SIZE(group_names)) {
			fprintf(stderr, "unknown test group '%s'\n", tok);
			free(copy);
			return -1;
		}
		*groups |= group_names[i].bit;
	}
	free(copy);
	return 0;
}

/* BYTES with an optional K, M or G (binary) suffix. */
static int parse_size(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	switch (*end) {
	case 'G': case 'g': v <<= 10; /* fall through */
	case 'M': case 'm': v <<= 10; /* fall through */
	case 'K': case 'k': v <<= 10; end++; break;
	default: break;
	}
	if (errno || end == s || *end) {
		fprintf(stderr, "not a size: '%s'\n", s);
		return -1;
	}
	*bytes = v;
	return 0;
}

static int parse_soak_ops(const char *s, unsigned int *ops)
{
	static const char *const names[SOAK_NOPS] = { "write", "read", "send" };
	char *copy = strdup(s), *tok, *save = NULL;
	int i;

	if (!copy)
		return -1;
	*ops = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < SOAK_NOPS; i++)
			if (!strcmp(tok, names[i]))
				break;
		if (i == SOAK_NOPS) {
			fprintf(stderr, "unknown soak operation '%s'\n", tok);
			free(copy);
			return -1;
		}
		*ops |= 1 << i;
	}
	free(copy);
	return *ops ? 0 : -1;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "loopback", no_argument, NULL, 'l' },
		{ "server", no_argument, NULL, 's' },
		{ "client", required_argument, NULL, 'c' },
		{ "dev", required_argument, NULL, 'd' },
		{ "ib-port", required_argument, NULL, 'i' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "port", required_argument, NULL, 'p' },
		{ "quick", no_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 'S' },
		{ "tests", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "self-check", no_argument, NULL, 'C' },
		{ "soak", required_argument, NULL, 'B' },
		{ "progress", required_argument, NULL, 'P' },
		{ "wait", required_argument, NULL, 'W' },
		{ "soak-ops", required_argument, NULL, 'O' },
		{ "qp-timeout", required_argument, NULL, 'T' },
		{ "rxe", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	*o = (struct opts){
		.ib_port = 1, .tcp_port = DEFAULT_TCP_PORT, .groups = G_ALL,
		.seed = mix32((uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16)),
		.soak_step = 16 * MIB, .soak_ops = 7, .wait_ms = WAIT_MS,
		.qp_timeout = -1, .rxe = -1,
	};
	while ((ch = getopt_long(argc, argv, "lsc:d:i:g:p:qS:t:vCB:P:W:O:T:h", lopts, NULL)) != -1) {
		switch (ch) {
		case 'l': o->loopback = true; break;
		case 's': o->server = true; break;
		case 'c': o->host = optarg; break;
		case 'd': o->dev = optarg; break;
		case 'i': o->ib_port = atoi(optarg); break;
		case 'g': o->gid_idx = atoi(optarg); break;
		case 'p': o->tcp_port = atoi(optarg); break;
		case 'q': o->quick = true; break;
		case 'S': o->seed = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 't':
			if (parse_groups(optarg, &o->groups))
				return -1;
			break;
		case 'v': o->verbose = true; break;
		case 'C': o->self_check = true; break;
		case 'B':
			if (parse_size(optarg, &o->soak_bytes))
				return -1;
			break;
		case 'P':
			if (parse_size(optarg, &o->soak_step) || !o->soak_step)
				return -1;
			break;
		case 'O':
			if (parse_soak_ops(optarg, &o->soak_ops))
				return -1;
			break;
		case 'T':
			o->qp_timeout = atoi(optarg);
			if (o->qp_timeout < 0 || o->qp_timeout > 31)
				return -1;
			break;
		case 'W':
			o->wait_ms = atoi(optarg) * 1000;
			if (o->wait_ms <= 0)
				return -1;
			break;
		case 'R':
			o->rxe = !strcmp(optarg, "yes") ? 1 : !strcmp(optarg, "no") ? 0 :
				 !strcmp(optarg, "auto") ? -1 : -2;
			if (o->rxe == -2)
				return -1;
			break;
		case 'h': usage(stdout); exit(0);
		default: return -1;
		}
	}
	if (optind != argc || o->loopback + o->server + !!o->host != 1) {
		fprintf(stderr, "say exactly one of -l, -s, -c HOST\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;

	if (parse_opts(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	return o.server ? server_main(&o) : client_main(&o);
}
