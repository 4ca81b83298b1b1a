// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_hostile: a verbs program that behaves the way a hostile (or
 * broken) user of an rxe-ABI device may, and checks the kernel holds.
 * Each mode prints TAP ("ok N - ...", "# ..." diagnostics, a plan "1..N"
 * at the end) and exits 0 only if every assertion passed.
 *
 *   sroce_hostile sqflood  -d DEV -g GIDX   user-written SQ producer index
 *   sroce_hostile curstate -d DEV -g GIDX   modify_qp with a lying cur_qp_state
 *   sroce_hostile caps     -d DEV           caps vs query_device limits
 *   sroce_hostile memcg    -d DEV -l BYTES  big rings in a memory cgroup
 *   sroce_hostile qpnrace  -d DEV -a ADDR   create_qp failing late vs packets
 *   sroce_hostile churn    -d DEV -g GIDX -n N   create/use/destroy loops
 *   sroce_hostile hold     -d DEV -g GIDX -t SEC hold the device, traffic,
 *                                           until IBV_EVENT_DEVICE_FATAL
 *
 * The rings: librxe maps each work queue from /dev/infiniband/uverbsN; a
 * ring starts with struct rxe_queue_buf (<rdma/rdma_user_rxe.h>).  This
 * program finds its QP's send ring in /proc/self/maps and writes it behind
 * librxe's back, as any process may.  The legacy write() commands on the
 * context's cmd_fd (<rdma/ib_user_verbs.h>) give the doorbell (POST_SEND
 * with no work request, what librxe itself does) and a CREATE_QP whose
 * response buffer has no room for the driver's part.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "sroce_tap.h"

#define BUF_SIZE	65536
#define MAX_MAPS	256

static const char *dev_name;
static int gid_index = -1;
static int num_cycles = 20;
static double hold_secs = 60;
/*
 * sqflood: a verb must return by then.  It takes 0.1-0.4 s, up to 1.1 s
 * with the host's CPUs busy; one that waits for the ring to empty is
 * kept until the writer stops feeding it, flood_stall (3 s).
 */
static double op_limit = 2.0;
static double flood_stall = 3.0;	/* sqflood: stop writing after this */
static double race_secs = 15;
static unsigned long long mem_limit;
static const char *target_addr = "10.0.0.1";

/* xorshift64: deterministic garbage, seeded per run. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* ------------------------------------------------------------- verbs */

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf;
	union ibv_gid gid;
	struct ibv_device_attr attr;
};

/* Open DEV with a PD, a CQ of @cqe entries and one registered buffer. */
static void dev_open(struct dev *d, int cqe)
{
	memset(d, 0, sizeof(*d));
	d->ctx = open_ctx(dev_name);
	if (!d->ctx)
		bail("cannot open %s", dev_name);
	if (ibv_query_device(d->ctx, &d->attr))
		bail("query_device");
	if (gid_index >= 0 && ibv_query_gid(d->ctx, 1, gid_index, &d->gid))
		bail("query_gid %d", gid_index);
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd)
		bail("alloc_pd");
	d->cq = ibv_create_cq(d->ctx, cqe, NULL, NULL, 0);
	if (!d->cq)
		bail("create_cq %d", cqe);
	d->buf = aligned_alloc(4096, BUF_SIZE);
	if (!d->buf)
		bail("malloc");
	memset(d->buf, 0, BUF_SIZE);
	d->mr = ibv_reg_mr(d->pd, d->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!d->mr)
		bail("reg_mr");
}

static void dev_close(struct dev *d)
{
	check(!ibv_dereg_mr(d->mr), "dereg_mr");
	check(!ibv_destroy_cq(d->cq), "destroy_cq");
	check(!ibv_dealloc_pd(d->pd), "dealloc_pd");
	check(!ibv_close_device(d->ctx), "close_device");
	free(d->buf);
}

static struct ibv_qp *rc_qp(struct dev *d, struct ibv_cq *scq, uint32_t send_wr,
			    uint32_t recv_wr, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq,
		.recv_cq = d->cq,
		.cap = { .max_send_wr = send_wr, .max_recv_wr = recv_wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(d->pd, &ia);

	if (qp && cap)
		*cap = ia.cap;
	return qp;
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int to_rtr(struct dev *d, struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn,
		.rq_psn = 0,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = { .dgid = d->gid, .sgid_index = gid_index,
				 .hop_limit = 64 },
		},
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

#define RTS_MASK (IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
		  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)

static void rts_attr(struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->sq_psn = 0;
	a->max_rd_atomic = 1;
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	rts_attr(&a);
	return ibv_modify_qp(qp, &a, RTS_MASK);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* Connect @qp to the QP numbered @dqpn on the same device (loopback). */
static int connect_qp(struct dev *d, struct ibv_qp *qp, uint32_t dqpn)
{
	return to_init(qp) || to_rtr(d, qp, dqpn) || to_rts(qp);
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

/* The legacy doorbell: POST_SEND with no work request, as librxe does. */
static int doorbell(struct ibv_qp *qp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} req;
	struct ib_uverbs_post_send_resp resp;

	memset(&req, 0, sizeof(req));
	req.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.qp_handle = qp->handle;
	req.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	if (write(qp->context->cmd_fd, &req, sizeof(req)) != sizeof(req))
		return errno;
	return 0;
}

/* ------------------------------------------------------------- rings */

struct map {
	unsigned long start, end;
};

/* The mappings of /dev/infiniband/uverbs* in this process. */
static int uverbs_maps(struct map *m, int max)
{
	char line[512], path[256];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		bail("/proc/self/maps");
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		path[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &s, &e, path) < 2)
			continue;
		if (strncmp(path, "/dev/infiniband/uverbs", 22))
			continue;
		m[n].start = s;
		m[n].end = e;
		n++;
	}
	fclose(f);
	return n;
}

static bool map_in(const struct map *m, int n, unsigned long start)
{
	int i;

	for (i = 0; i < n; i++)
		if (m[i].start == start)
			return true;
	return false;
}

/*
 * Create an RC QP and find its send ring: a uverbs mapping that was not
 * there before, whose slots hold a struct rxe_send_wqe and whose
 * index_mask is about the send queue's capacity (the receive ring's
 * slots are smaller, and it is made of another size).
 */
static struct ibv_qp *rc_qp_with_ring(struct dev *d, struct ibv_cq *scq,
				      uint32_t send_wr, uint32_t recv_wr,
				      struct rxe_queue_buf **ring,
				      struct ibv_qp_cap *cap)
{
	struct map before[MAX_MAPS], after[MAX_MAPS];
	int nb, na, i;
	struct ibv_qp *qp;

	*ring = NULL;
	nb = uverbs_maps(before, MAX_MAPS);
	qp = rc_qp(d, scq, send_wr, recv_wr, cap);
	if (!qp)
		return NULL;
	na = uverbs_maps(after, MAX_MAPS);
	for (i = 0; i < na; i++) {
		struct rxe_queue_buf *q = (void *)after[i].start;
		size_t len = after[i].end - after[i].start;

		if (map_in(before, nb, after[i].start))
			continue;
		if (q->log2_elem_size > 20 ||
		    (1UL << q->log2_elem_size) < sizeof(struct rxe_send_wqe) ||
		    q->index_mask < cap->max_send_wr ||
		    q->index_mask > 2 * cap->max_send_wr + 1 ||
		    sizeof(*q) + ((size_t)(q->index_mask + 1) << q->log2_elem_size) > len)
			continue;
		*ring = q;
		diag("send ring at %p: %u slots of %u bytes, mapping %zu bytes",
		     (void *)q, q->index_mask + 1, 1U << q->log2_elem_size, len);
	}
	return qp;
}

static struct rxe_send_wqe *ring_slot(struct rxe_queue_buf *q, uint32_t i)
{
	return (void *)(q->data + ((size_t)(i & q->index_mask) << q->log2_elem_size));
}

/*
 * Fill a slot with a WQE that must fail: an opcode no device has, a
 * gather list far longer than the QP's, a bad lkey, or random bytes with
 * one of those.  @wr_id is kept so completions can be matched.
 */
static void garbage_wqe(struct rxe_queue_buf *q, uint32_t i, uint64_t wr_id,
			uint32_t bad_lkey)
{
	struct rxe_send_wqe *w = ring_slot(q, i);
	size_t slot = 1UL << q->log2_elem_size;
	uint64_t r = rnd();
	size_t k;

	switch (r % 4) {
	case 0:			/* random bytes, then an impossible opcode */
		for (k = 0; k + 8 <= slot; k += 8) {
			uint64_t v = rnd();

			memcpy((char *)w + k, &v, 8);
		}
		w->wr.opcode = 0x100 + (uint32_t)(r >> 8) % 0xffff00;
		break;
	case 1:			/* a SEND with ~4 billion gather entries */
		memset(w, 0, sizeof(*w));
		w->wr.opcode = IBV_WR_SEND;
		w->dma.num_sge = 0xffffffffU - (uint32_t)(r >> 40);
		w->dma.length = 0xffffffffU;
		break;
	case 2:			/* a SEND of 64 bytes from a bad lkey */
		memset(w, 0, sizeof(*w) + sizeof(struct rxe_sge));
		w->wr.opcode = IBV_WR_SEND;
		w->wr.send_flags = IBV_SEND_SIGNALED;
		w->dma.num_sge = 1;
		w->dma.length = 64;
		w->dma.sge[0].addr = r;
		w->dma.sge[0].length = 64;
		w->dma.sge[0].lkey = bad_lkey;
		break;
	default:		/* an RDMA WRITE of 2^31+ bytes, inline */
		memset(w, 0, sizeof(*w));
		w->wr.opcode = IBV_WR_RDMA_WRITE;
		w->wr.send_flags = IBV_SEND_INLINE;
		w->dma.length = 0x80000000U | (uint32_t)r;
		break;
	}
	w->wr.wr_id = wr_id;
}

static inline uint32_t load_acq(uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_rel(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* -------------------------------------------------------------- sqflood */

struct flood {
	struct rxe_queue_buf *q;
	uint32_t bad_lkey;
	atomic_bool stop;
	atomic_bool op_busy;		/* the main thread is in a verb */
	_Atomic double op_start;
	atomic_ullong consumed;		/* slots the kernel consumed */
	atomic_ullong writes;
	atomic_uint stalls;		/* verbs that outlived flood_stall */
	unsigned long long consumed_before;
	unsigned int ops;		/* verbs timed so far */
};

/*
 * Keep the ring full: producer = consumer + capacity, so every slot the
 * kernel consumes is at once replaced; every other round one slot is left
 * free for librxe's ibv_post_send.  A verb that has not returned after
 * flood_stall seconds is not fed any more, so a kernel that loops while
 * the ring is not empty gets out (and the verb is reported too slow).
 */
static void *flood_writer(void *arg)
{
	struct flood *f = arg;
	struct rxe_queue_buf *q = f->q;
	uint32_t last = load_acq(&q->consumer_index), mask = q->index_mask;
	unsigned long long consumed = 0, writes = 0;
	unsigned int k;
	bool feed;

	while (!atomic_load(&f->stop)) {
		/* Now and then: a stuck verb is not fed any more. */
		feed = !atomic_load(&f->op_busy) ||
		       now() - atomic_load(&f->op_start) <= flood_stall;
		if (feed)
			garbage_wqe(q, last + (uint32_t)(rnd() % mask), rnd(),
				    f->bad_lkey);
		/* The tight part: nothing here but the two indices. */
		for (k = 0; k < 4096; k++) {
			uint32_t c = load_acq(&q->consumer_index);

			consumed += (c - last) & mask;
			last = c;
			if (feed)
				store_rel(&q->producer_index,
					  (c + mask - (k & 1)) & mask);
		}
		if (feed)
			writes += k;
		else
			usleep(1000);
		atomic_store(&f->consumed, consumed);
		atomic_store(&f->writes, writes);
	}
	return NULL;
}

/*
 * The writer on the second CPU, at a real-time priority: nothing on that
 * CPU (a kernel worker waiting for the QP) may stop it feeding the ring
 * while the main thread, on the first CPU, is in the kernel.
 */
static int start_writer(pthread_t *th, struct flood *f)
{
	struct sched_param sp = { .sched_priority = 10 };
	pthread_attr_t attr;
	cpu_set_t cpus;
	int err;

	pthread_attr_init(&attr);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		CPU_ZERO(&cpus);
		CPU_SET(0, &cpus);
		sched_setaffinity(0, sizeof(cpus), &cpus);
		CPU_ZERO(&cpus);
		CPU_SET(1, &cpus);
		pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	}
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &sp);
	err = pthread_create(th, &attr, flood_writer, f);
	if (err) {
		diag("no real-time writer (%s): an ordinary thread", strerror(err));
		pthread_attr_setinheritsched(&attr, PTHREAD_INHERIT_SCHED);
		err = pthread_create(th, &attr, flood_writer, f);
	}
	pthread_attr_destroy(&attr);
	return err;
}

static void op_begin(struct flood *f)
{
	f->consumed_before = atomic_load(&f->consumed);
	f->ops++;
	atomic_store(&f->op_start, now());
	atomic_store(&f->op_busy, true);
}

/*
 * Ends a timed verb: it must have returned within op_limit.  How many
 * WQEs the kernel took meanwhile is only shown: a driver may well go on
 * flushing, a budget at a time, from its work item for as long as the
 * writer keeps the ring full; what it must not do is keep the caller (or
 * a CPU, with BHs off) until the ring is empty.
 */
static void op_end(struct flood *f, const char *what, int err)
{
	double t = now() - atomic_load(&f->op_start);
	unsigned long long used = atomic_load(&f->consumed) - f->consumed_before;

	atomic_store(&f->op_busy, false);
	if (t > flood_stall)
		atomic_fetch_add(&f->stalls, 1);
	check(t <= op_limit,
	      "%s under a flooded SQ returns in %.3f s (limit %.1f s; %llu WQEs taken meanwhile, ring of %u; status %d)",
	      what, t, op_limit, used, f->q->index_mask, err);
}

/* Take every completion there is now; returns how many. */
static int drain_cq(struct ibv_cq *cq, int *errors)
{
	struct ibv_wc wc[64];
	int n, total = 0, i;

	while ((n = ibv_poll_cq(cq, 64, wc)) > 0) {
		for (i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS && errors)
				(*errors)++;
		total += n;
	}
	return total;
}

/*
 * Reads the async events waiting on @ctx now, at most @max of them;
 * returns how many were of @type.
 */
static unsigned int take_async_events(struct ibv_context *ctx,
				      enum ibv_event_type type, unsigned int max)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	unsigned int seen = 0, n = 0;

	while (seen < max && poll(&pfd, 1, 0) > 0 &&
	       !ibv_get_async_event(ctx, &ev)) {
		seen++;
		if (ev.event_type == type)
			n++;
		ibv_ack_async_event(&ev);
	}
	return n;
}

static int mode_sqflood(void)
{
	struct dev d;
	struct ibv_cq *scq;
	struct ibv_qp *a, *b;
	struct ibv_qp_cap cap;
	struct rxe_queue_buf *q;
	struct flood f;
	pthread_t th;
	uint32_t i, n, cons;
	int got = 0, bad_status = 0, in_order = 1, err, errs = 0, posted = 0, enomem = 0;
	double t0;
	struct ibv_wc wc;

	dev_open(&d, 256);
	scq = ibv_create_cq(d.ctx, 65535, NULL, NULL, 0);
	if (!scq)
		bail("create_cq");
	/*
	 * A big ring: the kernel must take longer to empty it than the
	 * writer takes to refill it, even when the writer's vCPU is slow.
	 */
	a = rc_qp_with_ring(&d, scq, 8000, 16, &q, &cap);
	if (!check(a && q, "found the send ring of an RC QP in /proc/self/maps"))
		bail("no send ring");
	b = rc_qp(&d, d.cq, 16, 128, NULL);
	if (!b)
		bail("create_qp");
	check(!connect_qp(&d, a, b->qp_num) && !connect_qp(&d, b, a->qp_num),
	      "loopback RC pair %u <-> %u to RTS", a->qp_num, b->qp_num);

	/* 1. A ring full of garbage, one doorbell: all of it fails. */
	cons = load_acq(&q->consumer_index);
	n = q->index_mask;
	for (i = 0; i < n; i++)
		garbage_wqe(q, cons + i, i, d.mr->lkey ^ 0x5a5a00);
	store_rel(&q->producer_index, (cons + n) & q->index_mask);
	check(!doorbell(a), "doorbell with %u garbage WQEs in the ring", n);
	t0 = now();
	while (got < (int)n && now() - t0 < 10) {
		int k = ibv_poll_cq(scq, 1, &wc);

		if (k < 0)
			break;
		if (!k) {
			usleep(1000);
			continue;
		}
		if (wc.status == IBV_WC_SUCCESS)
			bad_status++;
		if (wc.wr_id != (uint64_t)got)
			in_order = 0;
		if (got < 2 || wc.wr_id != (uint64_t)got)
			diag("completion %d: wr_id %" PRIu64 " status %s (%d)", got,
			     wc.wr_id, ibv_wc_status_str(wc.status), wc.status);
		got++;
	}
	check(got == (int)n, "every garbage WQE completed (%d of %u)", got, n);
	check(!bad_status, "none of them succeeded (%d did)", bad_status);
	check(in_order, "they completed in posting order, with their wr_ids");
	check(qp_state(a) == IBV_QPS_ERR, "the QP is in ERR (state %d)", qp_state(a));

	/* 2. Keep the ring full from a thread while the QP is flushed and reset. */
	memset(&f, 0, sizeof(f));
	f.q = q;
	f.bad_lkey = d.mr->lkey ^ 0x5a5a00;
	if (start_writer(&th, &f))
		bail("pthread_create");
	usleep(100000);
	for (i = 0; i < 3; i++) {
		op_begin(&f);
		err = doorbell(a);
		op_end(&f, "doorbell in ERR", err);
		drain_cq(scq, NULL);
	}
	for (i = 0; i < 20; i++) {
		struct ibv_sge sge = { (uintptr_t)d.buf, 64, d.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 1000 + i, .sg_list = &sge,
					  .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *badwr;

		op_begin(&f);
		err = ibv_post_send(a, &wr, &badwr);
		atomic_store(&f.op_busy, false);
		if (err == ENOMEM)
			enomem++;
		else if (!err)
			posted++;
		else
			errs++;
		if (now() - atomic_load(&f.op_start) > op_limit)
			op_end(&f, "ibv_post_send in ERR", err);
		drain_cq(scq, NULL);
	}
	diag("ibv_post_send while the ring is kept full: %d posted, %d ENOMEM, %d other errors",
	     posted, enomem, errs);
	drain_cq(scq, NULL);
	op_begin(&f);
	err = to_state(a, IBV_QPS_ERR);
	op_end(&f, "modify_qp ERR -> ERR", err);
	drain_cq(scq, NULL);
	op_begin(&f);
	err = to_state(a, IBV_QPS_RESET);
	op_end(&f, "modify_qp ERR -> RESET", err);
	check(!err && qp_state(a) == IBV_QPS_RESET, "the QP is in RESET");
	drain_cq(scq, NULL);
	op_begin(&f);
	err = to_init(a) || to_rtr(&d, a, b->qp_num) || to_rts(a);
	op_end(&f, "modify_qp RESET -> INIT -> RTR -> RTS", err);
	for (i = 0; i < 3; i++) {
		op_begin(&f);
		err = doorbell(a);
		op_end(&f, "doorbell in RTS/ERR", err);
		drain_cq(scq, NULL);
	}
	usleep(200000);
	op_begin(&f);
	err = to_state(a, IBV_QPS_RESET);
	op_end(&f, "modify_qp -> RESET again", err);
	drain_cq(scq, NULL);

	atomic_store(&f.stop, true);
	pthread_join(th, NULL);
	diag("the writer set the producer index %llu times; the kernel consumed %llu slots (capacity %u); %u verbs outlived %.1f s",
	     (unsigned long long)atomic_load(&f.writes),
	     (unsigned long long)atomic_load(&f.consumed), q->index_mask,
	     atomic_load(&f.stalls), flood_stall);
	check(!atomic_load(&f.stalls),
	      "no verb had to wait for the writer to stop (the kernel did not loop on the user's index)");
	/*
	 * Each verb may have the kernel flush a ring's worth (and a reset
	 * or a failed fetch take another): not more.  A driver that flushes
	 * from its work item for as long as the writer refills the ring
	 * lets one store of an index buy a CPU at kernel priority.
	 */
	check(atomic_load(&f.consumed) <= (unsigned long long)(f.ops + 6) * (q->index_mask + 1),
	      "the kernel took at most a ring's worth a verb (%llu slots for %u verbs, ring of %u)",
	      (unsigned long long)atomic_load(&f.consumed), f.ops, q->index_mask + 1);
	/*
	 * The flushes overflowed the send CQ between our drains: each
	 * overflow may be reported, each lost completion must not be (every
	 * event is kernel memory on our async list until we read it).
	 */
	n = take_async_events(d.ctx, IBV_EVENT_CQ_ERR, 100000);
	check(n <= 64, "CQ overflow reported once per overflow, not per lost completion (%u IBV_EVENT_CQ_ERR)",
	      n);

	/* 3. Left alone, the QP is usable again. */
	store_rel(&q->producer_index, load_acq(&q->consumer_index));
	check(!connect_qp(&d, a, b->qp_num) && !to_state(b, IBV_QPS_RESET) &&
	      !connect_qp(&d, b, a->qp_num), "the pair reconnects");
	{
		struct ibv_sge rs = { (uintptr_t)d.buf + 4096, 64, d.mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &rs, .num_sge = 1 };
		struct ibv_sge ss = { (uintptr_t)d.buf, 64, d.mr->lkey };
		struct ibv_send_wr swr = { .wr_id = 8, .sg_list = &ss, .num_sge = 1,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED };
		struct ibv_recv_wr *brw;
		struct ibv_send_wr *bsw;
		int sok = 0, rok = 0;

		drain_cq(scq, NULL);
		drain_cq(d.cq, NULL);
		memset(d.buf + 4096, 0, 64);
		for (i = 0; i < 64; i++)
			d.buf[i] = (char)(i * 7 + 1);
		err = ibv_post_recv(b, &rwr, &brw) || ibv_post_send(a, &swr, &bsw);
		t0 = now();
		while (!err && (!sok || !rok) && now() - t0 < 10) {
			if (ibv_poll_cq(scq, 1, &wc) == 1)
				sok = wc.status == IBV_WC_SUCCESS ? 1 : -1;
			if (ibv_poll_cq(d.cq, 1, &wc) == 1)
				rok = wc.status == IBV_WC_SUCCESS ? 1 : -1;
		}
		check(sok == 1 && rok == 1 && !memcmp(d.buf, d.buf + 4096, 64),
		      "a SEND on the reconnected pair arrives intact (send %d recv %d)",
		      sok, rok);
	}
	check(!ibv_destroy_qp(a) && !ibv_destroy_qp(b), "destroy the QPs");
	check(!ibv_destroy_cq(scq), "destroy the send CQ");
	dev_close(&d);
	return tap_done();
}

/* ------------------------------------------------------------- curstate */

/*
 * modify_qp with IBV_QP_CUR_STATE: the consumer's idea of the QP's state.
 * A wrong one must be refused, and the QP must stay where it was.
 */
static void lie(struct ibv_qp *qp, enum ibv_qp_state real, enum ibv_qp_state claim,
		enum ibv_qp_state want, struct ibv_qp_attr *a, int mask, const char *what)
{
	int err;

	a->cur_qp_state = claim;
	a->qp_state = want;
	err = ibv_modify_qp(qp, a, mask | IBV_QP_STATE | IBV_QP_CUR_STATE);
	check(err == EINVAL, "%s: refused with EINVAL (got %d %s)", what, err,
	      err ? strerror(err) : "success");
	check(qp_state(qp) == (int)real, "%s: the QP stays in state %d (now %d)",
	      what, real, qp_state(qp));
}

static int mode_curstate(void)
{
	struct dev d;
	struct ibv_qp *a, *b;
	struct ibv_qp_attr at;
	int i, err;
	double t0;

	dev_open(&d, 256);
	a = rc_qp(&d, d.cq, 16, 16, NULL);
	b = rc_qp(&d, d.cq, 16, 16, NULL);
	if (!a || !b)
		bail("create_qp");

	memset(&at, 0, sizeof(at));
	lie(a, IBV_QPS_RESET, IBV_QPS_RTS, IBV_QPS_SQD, &at, 0,
	    "RESET QP claiming RTS, to SQD");
	rts_attr(&at);
	lie(a, IBV_QPS_RESET, IBV_QPS_RTR, IBV_QPS_RTS, &at, RTS_MASK & ~IBV_QP_STATE,
	    "RESET QP claiming RTR, to RTS");
	check(!to_init(a), "to INIT");
	rts_attr(&at);
	lie(a, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, &at, RTS_MASK & ~IBV_QP_STATE,
	    "INIT QP claiming RTR, to RTS");
	check(!to_rtr(&d, a, b->qp_num) && !to_rts(a) && !connect_qp(&d, b, a->qp_num),
	      "loopback pair to RTS the proper way");
	/* The truth is accepted. */
	rts_attr(&at);
	at.cur_qp_state = IBV_QPS_RTS;
	err = ibv_modify_qp(a, &at, IBV_QP_STATE | IBV_QP_CUR_STATE);
	check(!err, "RTS QP claiming RTS, to RTS: accepted (%d)", err);
	check(!to_state(a, IBV_QPS_ERR), "to ERR");
	rts_attr(&at);
	lie(a, IBV_QPS_ERR, IBV_QPS_RTR, IBV_QPS_RTS, &at, RTS_MASK & ~IBV_QP_STATE,
	    "ERR QP claiming RTR, to RTS");
	memset(&at, 0, sizeof(at));
	lie(a, IBV_QPS_ERR, IBV_QPS_RTS, IBV_QPS_SQD, &at, 0,
	    "ERR QP claiming RTS, to SQD");

	/*
	 * If the driver believed the lie, the QP is in RTS or SQD with the
	 * engine state of a QP in ERR: send it traffic both ways, and see
	 * that nothing in the kernel minds (the harness reads its log).
	 */
	for (i = 0; i < 50; i++) {
		struct ibv_sge rs = { (uintptr_t)d.buf + 8192, 256, d.mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = i, .sg_list = &rs, .num_sge = 1 };
		struct ibv_sge ss = { (uintptr_t)d.buf, 256, d.mr->lkey };
		struct ibv_send_wr swr = { .wr_id = i, .sg_list = &ss, .num_sge = 1,
					   .opcode = i & 1 ? IBV_WR_SEND : IBV_WR_RDMA_WRITE,
					   .send_flags = IBV_SEND_SIGNALED,
					   .wr.rdma = { (uintptr_t)d.buf + 16384, d.mr->rkey } };
		struct ibv_recv_wr *brw;
		struct ibv_send_wr *bsw;

		ibv_post_recv(a, &rwr, &brw);
		ibv_post_recv(b, &rwr, &brw);
		ibv_post_send(a, &swr, &bsw);
		ibv_post_send(b, &swr, &bsw);
	}
	t0 = now();
	while (now() - t0 < 2)
		if (!drain_cq(d.cq, NULL))
			usleep(10000);
	check(qp_state(a) == IBV_QPS_ERR, "after traffic the QP is still in ERR (%d)",
	      qp_state(a));
	check(!to_state(a, IBV_QPS_RESET) && !connect_qp(&d, a, b->qp_num),
	      "RESET then RTS again works");
	check(!ibv_destroy_qp(a) && !ibv_destroy_qp(b), "destroy the QPs");
	dev_close(&d);
	return tap_done();
}

/* ----------------------------------------------------------------- caps */

static int mode_caps(void)
{
	struct dev d;
	struct ibv_device_attr *da = &d.attr;
	struct ibv_qp_init_attr ia, qia;
	struct ibv_qp_attr qa;
	struct ibv_srq_init_attr sia;
	struct ibv_srq_attr sa;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	uint32_t max_wr;

	dev_open(&d, 16);
	diag("max_qp_wr %d max_srq_wr %d max_cqe %d max_sge %d", da->max_qp_wr,
	     da->max_srq_wr, da->max_cqe, da->max_sge);
	max_wr = da->max_qp_wr;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = d.cq;
	ia.recv_cq = d.cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = max_wr;
	ia.cap.max_recv_wr = max_wr;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(d.pd, &ia);
	if (check(qp, "an RC QP with max_send_wr = max_recv_wr = max_qp_wr (%u) is created (errno %d)",
		  max_wr, qp ? 0 : errno)) {
		check(ia.cap.max_send_wr >= max_wr && ia.cap.max_send_wr <= max_wr,
		      "create returns max_send_wr %u (asked %u, max_qp_wr %u)",
		      ia.cap.max_send_wr, max_wr, max_wr);
		check(ia.cap.max_recv_wr >= max_wr && ia.cap.max_recv_wr <= max_wr,
		      "create returns max_recv_wr %u (asked %u, max_qp_wr %u)",
		      ia.cap.max_recv_wr, max_wr, max_wr);
		memset(&qa, 0, sizeof(qa));
		ibv_query_qp(qp, &qa, IBV_QP_CAP, &qia);
		check(qa.cap.max_send_wr <= max_wr && qa.cap.max_recv_wr <= max_wr,
		      "query_qp: max_send_wr %u max_recv_wr %u <= max_qp_wr %u",
		      qa.cap.max_send_wr, qa.cap.max_recv_wr, max_wr);
		ibv_destroy_qp(qp);
	}
	ia.cap.max_send_wr = max_wr + 1;
	ia.cap.max_recv_wr = 1;
	qp = ibv_create_qp(d.pd, &ia);
	check(!qp, "max_send_wr = max_qp_wr + 1 is refused");
	if (qp)
		ibv_destroy_qp(qp);
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = max_wr + 1;
	qp = ibv_create_qp(d.pd, &ia);
	check(!qp, "max_recv_wr = max_qp_wr + 1 is refused");
	if (qp)
		ibv_destroy_qp(qp);

	memset(&sia, 0, sizeof(sia));
	sia.attr.max_wr = da->max_srq_wr;
	sia.attr.max_sge = 1;
	srq = ibv_create_srq(d.pd, &sia);
	if (check(srq, "an SRQ of max_srq_wr (%d) WRs is created (errno %d)",
		  da->max_srq_wr, srq ? 0 : errno)) {
		check(sia.attr.max_wr == (uint32_t)da->max_srq_wr,
		      "create returns max_wr %u (max_srq_wr %d)", sia.attr.max_wr,
		      da->max_srq_wr);
		memset(&sa, 0, sizeof(sa));
		ibv_query_srq(srq, &sa);
		check(sa.max_wr <= (uint32_t)da->max_srq_wr,
		      "query_srq: max_wr %u <= max_srq_wr %d", sa.max_wr, da->max_srq_wr);
		ibv_destroy_srq(srq);
	}
	sia.attr.max_wr = da->max_srq_wr + 1;
	srq = ibv_create_srq(d.pd, &sia);
	check(!srq, "an SRQ of max_srq_wr + 1 is refused");
	if (srq)
		ibv_destroy_srq(srq);

	cq = ibv_create_cq(d.ctx, da->max_cqe, NULL, NULL, 0);
	if (check(cq, "a CQ of max_cqe (%d) is created (errno %d)", da->max_cqe,
		  cq ? 0 : errno)) {
		check(cq->cqe >= da->max_cqe && cq->cqe <= da->max_cqe,
		      "it has %d entries (max_cqe %d)", cq->cqe, da->max_cqe);
		ibv_destroy_cq(cq);
	}
	cq = ibv_create_cq(d.ctx, da->max_cqe + 1, NULL, NULL, 0);
	check(!cq, "a CQ of max_cqe + 1 is refused");
	if (cq)
		ibv_destroy_cq(cq);
	dev_close(&d);
	return tap_done();
}

/* ---------------------------------------------------------------- memcg */

/* This process's cgroup v2 file @name, read as a number; -1 if none. */
static long long cg_read(const char *name)
{
	char line[512], path[700];
	long long v = -1;
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return -1;
	path[0] = 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/%s",
				 line + 3, name);
		}
	fclose(f);
	if (!path[0] || !(f = fopen(path, "r")))
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static size_t pow2(size_t x)
{
	size_t p = 64;

	while (p < x)
		p <<= 1;
	return p;
}

static int mode_memcg(void)
{
	struct dev d;
	struct ibv_qp *qps[256];
	struct ibv_qp_init_attr ia;
	size_t ring_bytes, total = 0;
	long long before, cur, peak = 0;
	int n = 0, err = 0, i;

	if (!mem_limit)
		bail("memcg needs -l BYTES (the cgroup's memory.max)");
	dev_open(&d, 16);
	before = cg_read("memory.current");
	diag("memory.current %lld before, memory.max %lld", before, cg_read("memory.max"));
	if (before < 0)
		bail("no memory.current for this process's cgroup");
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = d.cq;
	ia.recv_cq = d.cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = d.attr.max_qp_wr;
	ia.cap.max_recv_wr = d.attr.max_qp_wr;
	ia.cap.max_send_sge = d.attr.max_sge;
	ia.cap.max_recv_sge = d.attr.max_sge;
	/* What librxe maps per QP: the two rings, header excluded. */
	ring_bytes = pow2(sizeof(struct rxe_send_wqe) + d.attr.max_sge * sizeof(struct rxe_sge)) *
		     pow2(d.attr.max_qp_wr + 1) +
		     pow2(sizeof(struct rxe_recv_wqe) + d.attr.max_sge * sizeof(struct rxe_sge)) *
		     pow2(d.attr.max_qp_wr + 1);
	diag("each QP has %zu KiB of rings", ring_bytes >> 10);

	/* Up to 3x the limit: uncharged rings would all fit. */
	while (n < 256 && total < 3 * mem_limit) {
		struct ibv_qp_init_attr a = ia;

		qps[n] = ibv_create_qp(d.pd, &a);
		if (!qps[n]) {
			err = errno;
			break;
		}
		total += ring_bytes;
		cur = cg_read("memory.current");
		if (cur > peak)
			peak = cur;
		diag("QP %d (qpn %u): memory.current %lld (+%lld KiB since the start)",
		     n, qps[n]->qp_num, cur, (cur - before) >> 10);
		if (n == 0)
			check(cur - before >= (long long)ring_bytes / 2,
			      "the first QP's rings are charged: memory.current +%lld KiB for %zu KiB of rings",
			      (cur - before) >> 10, ring_bytes >> 10);
		n++;
	}
	check(err == ENOMEM, "creating QPs stops with ENOMEM at the limit (%d QPs, %zu MiB of rings, errno %d %s)",
	      n, total >> 20, err, err ? strerror(err) : "none");
	check(total <= mem_limit + ring_bytes,
	      "no more rings than the cgroup's memory.max (%llu MiB) allow were created",
	      mem_limit >> 20);
	diag("peak memory.current %lld", peak);
	for (i = 0; i < n; i++)
		ibv_destroy_qp(qps[i]);
	cur = cg_read("memory.current");
	diag("memory.current %lld after destroying them", cur);
	dev_close(&d);
	return tap_done();
}

/* -------------------------------------------------------------- qpnrace */

struct race {
	atomic_bool stop;
	atomic_uint next_qpn;	/* the QPN the next create attempt gets */
	atomic_ullong sent;
};

/*
 * Send RoCEv2 packets (an RC SEND_FIRST of 1 KiB, too big to be handled
 * where it arrives, so it is queued and the QP's work item kicked) to the
 * QPNs the failing creates are about to get.  No ICRC needed: today's
 * receive path looks up the QP before checking it.
 */
static void *race_sender(void *arg)
{
	struct race *r = arg;
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(4791) };
	unsigned char pkt[1024 + 12 + 4];
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	unsigned int k = 0;

	if (s < 0 || inet_pton(AF_INET, target_addr, &dst.sin_addr) != 1)
		bail("udp socket to %s", target_addr);
	memset(pkt, 0xab, sizeof(pkt));
	pkt[0] = 0x00;				/* RC SEND_FIRST */
	pkt[1] = 0;
	pkt[2] = 0xff;
	pkt[3] = 0xff;				/* P_Key */
	while (!atomic_load(&r->stop)) {
		uint32_t qpn = atomic_load(&r->next_qpn) + (k++ % 3);

		pkt[4] = 0;
		pkt[5] = qpn >> 16;
		pkt[6] = qpn >> 8;
		pkt[7] = qpn;
		pkt[8] = 0x80;
		pkt[9] = pkt[10] = pkt[11] = 0;
		if (sendto(s, pkt, sizeof(pkt), 0, (void *)&dst, sizeof(dst)) > 0)
			atomic_fetch_add(&r->sent, 1);
	}
	close(s);
	return NULL;
}

/* CREATE_QP through write() with no room for librxe's part of the answer. */
static int create_qp_short_resp(struct dev *d, uint32_t *handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_qp cmd;
	} req;
	struct ib_uverbs_create_qp_resp resp;

	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.hdr.command = IB_USER_VERBS_CMD_CREATE_QP;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.user_handle = 0x5eed;
	req.cmd.pd_handle = d->pd->handle;
	req.cmd.send_cq_handle = d->cq->handle;
	req.cmd.recv_cq_handle = d->cq->handle;
	req.cmd.max_send_wr = 16;
	req.cmd.max_recv_wr = 16;
	req.cmd.max_send_sge = 1;
	req.cmd.max_recv_sge = 1;
	req.cmd.qp_type = IBV_QPT_RC;
	if (write(d->ctx->cmd_fd, &req, sizeof(req)) != sizeof(req))
		return errno;
	*handle = resp.qp_handle;
	return 0;
}

static int mode_qpnrace(void)
{
	struct dev d;
	struct race r;
	struct ibv_qp *probe;
	pthread_t th;
	unsigned long attempts = 0, einval = 0, other = 0, created = 0;
	uint32_t handle, first_qpn;
	double t0;
	int err, last_err = 0;

	dev_open(&d, 64);
	probe = rc_qp(&d, d.cq, 16, 16, NULL);
	if (!probe)
		bail("create_qp");
	first_qpn = probe->qp_num + 1;
	memset(&r, 0, sizeof(r));
	atomic_store(&r.next_qpn, first_qpn);
	if (pthread_create(&th, NULL, race_sender, &r))
		bail("pthread_create");
	t0 = now();
	while (now() - t0 < race_secs) {
		err = create_qp_short_resp(&d, &handle);
		attempts++;
		if (!err) {
			created++;
		} else if (err == EINVAL) {
			einval++;
		} else {
			other++;
			last_err = err;
		}
		/* QPNs are handed out cyclically: each try takes the next. */
		atomic_store(&r.next_qpn, first_qpn + attempts);
	}
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);
	diag("%lu create_qp attempts in %.0f s (QPNs %u..%lu), %llu packets sent at them",
	     attempts, race_secs, first_qpn, first_qpn + attempts - 1,
	     (unsigned long long)atomic_load(&r.sent));
	check(attempts > 0 && einval == attempts,
	      "every create_qp without room for the driver's response fails with EINVAL (%lu EINVAL, %lu created, %lu other, last errno %d)",
	      einval, created, other, last_err);
	check(!ibv_destroy_qp(probe), "the device still works: destroy the probe QP");
	probe = rc_qp(&d, d.cq, 16, 16, NULL);
	check(probe, "and create another");
	if (probe)
		ibv_destroy_qp(probe);
	dev_close(&d);
	return tap_done();
}

/* ---------------------------------------------------------------- churn */

/* Send @len bytes from @a to @b (both RTS, connected) and check them. */
static bool send_check(struct dev *d, struct ibv_qp *a, struct ibv_qp *b,
		       struct ibv_cq *cq, uint32_t len, uint32_t seed)
{
	struct ibv_sge rs = { (uintptr_t)d->buf + BUF_SIZE / 2, len, d->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rs, .num_sge = 1 };
	struct ibv_sge ss = { (uintptr_t)d->buf, len, d->mr->lkey };
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &ss, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr *brw;
	struct ibv_send_wr *bsw;
	struct ibv_wc wc;
	int done = 0, ok = 1;
	uint32_t i;
	double t0;

	for (i = 0; i < len; i++)
		d->buf[i] = (char)(seed + i * 13);
	memset(d->buf + BUF_SIZE / 2, 0, len);
	if (ibv_post_recv(b, &rwr, &brw) || ibv_post_send(a, &swr, &bsw))
		return false;
	t0 = now();
	while (done < 2 && now() - t0 < 20) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			return false;
		if (!n) {
			usleep(100);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS)
			ok = 0;
		if (wc.wr_id == 2 && wc.byte_len != len)
			ok = 0;
		done++;
	}
	return ok && done == 2 && !memcmp(d->buf, d->buf + BUF_SIZE / 2, len);
}

/* One cycle: open, create everything, use it, destroy, close. */
static bool churn_cycle(int c)
{
	struct dev d;
	struct ibv_qp *a, *b, *ud, *sq;
	struct ibv_srq *srq;
	struct ibv_mr *mrs[8];
	struct ibv_pd *pd2;
	struct ibv_cq *cq2;
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 64, .max_sge = 2 } };
	struct ibv_qp_init_attr uia = { .qp_type = IBV_QPT_UD,
					.cap = { .max_send_wr = 8, .max_recv_wr = 8,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	bool ok = true;
	int i;

	dev_open(&d, 64 + c % 512);
	pd2 = ibv_alloc_pd(d.ctx);
	cq2 = ibv_create_cq(d.ctx, 1 + c % 4096, NULL, NULL, 0);
	for (i = 0; i < 8; i++)
		mrs[i] = ibv_reg_mr(i & 1 ? d.pd : pd2, d.buf + i * 4096,
				    4096 * (1 + (c + i) % 8), IBV_ACCESS_LOCAL_WRITE |
				    (i & 2 ? IBV_ACCESS_REMOTE_WRITE : 0));
	a = rc_qp(&d, d.cq, 16 + c % 64, 16, NULL);
	b = rc_qp(&d, d.cq, 16, 16 + c % 64, NULL);
	srq = ibv_create_srq(d.pd, &sia);
	uia.send_cq = cq2;
	uia.recv_cq = cq2;
	ud = ibv_create_qp(pd2, &uia);
	uia.qp_type = IBV_QPT_RC;
	uia.srq = srq;
	uia.send_cq = d.cq;
	uia.recv_cq = d.cq;
	sq = srq ? ibv_create_qp(d.pd, &uia) : NULL;
	if (!pd2 || !cq2 || !a || !b || !srq || !ud || !sq) {
		diag("cycle %d: create failed (pd2 %p cq2 %p a %p b %p srq %p ud %p qp on srq %p, errno %d)",
		     c, (void *)pd2, (void *)cq2, (void *)a, (void *)b, (void *)srq,
		     (void *)ud, (void *)sq, errno);
		ok = false;
	}
	for (i = 0; i < 8; i++)
		if (!mrs[i]) {
			diag("cycle %d: reg_mr %d failed", c, i);
			ok = false;
		}
	if (ok && (connect_qp(&d, a, b->qp_num) || connect_qp(&d, b, a->qp_num))) {
		diag("cycle %d: connect failed", c);
		ok = false;
	}
	if (ok && !send_check(&d, a, b, d.cq, 1 + (c * 997) % (BUF_SIZE / 2), c)) {
		diag("cycle %d: the SEND did not arrive intact", c);
		ok = false;
	}
	/* Destroy in a different order every cycle. */
	if (c & 1) {
		if (a && ibv_destroy_qp(a))
			ok = false;
		if (b && ibv_destroy_qp(b))
			ok = false;
	} else {
		if (b && ibv_destroy_qp(b))
			ok = false;
		if (a && ibv_destroy_qp(a))
			ok = false;
	}
	if ((sq && ibv_destroy_qp(sq)) || (srq && ibv_destroy_srq(srq)) ||
	    (ud && ibv_destroy_qp(ud))) {
		diag("cycle %d: destroy failed, errno %d", c, errno);
		ok = false;
	}
	for (i = 0; i < 8; i++)
		if (mrs[i] && ibv_dereg_mr(mrs[i]))
			ok = false;
	if ((cq2 && ibv_destroy_cq(cq2)) || (pd2 && ibv_dealloc_pd(pd2)))
		ok = false;
	if (ibv_dereg_mr(d.mr) || ibv_destroy_cq(d.cq) || ibv_dealloc_pd(d.pd) ||
	    ibv_close_device(d.ctx)) {
		diag("cycle %d: teardown failed, errno %d", c, errno);
		ok = false;
	}
	free(d.buf);
	return ok;
}

static int mode_churn(void)
{
	int c, bad = 0;
	double t0 = now();

	for (c = 0; c < num_cycles; c++)
		if (!churn_cycle(c))
			bad++;
	check(!bad, "%d cycles of open, PD, CQ, MR, SRQ, RC/UD QP create, a checked SEND, destroy, close (%d failed, %.1f s)",
	      num_cycles, bad, now() - t0);
	return tap_done();
}

/* ----------------------------------------------------------------- hold */

static int mode_hold(void)
{
	struct dev d;
	struct ibv_qp *a, *b;
	struct ibv_async_event ev;
	struct pollfd pfd;
	struct ibv_pd *pd;
	double t0, tf = 0;
	unsigned long msgs = 0;
	bool fatal = false, traffic = true;
	int err;

	dev_open(&d, 256);
	a = rc_qp(&d, d.cq, 16, 16, NULL);
	b = rc_qp(&d, d.cq, 16, 16, NULL);
	if (!a || !b || connect_qp(&d, a, b->qp_num) || connect_qp(&d, b, a->qp_num))
		bail("loopback RC pair");
	pfd.fd = d.ctx->async_fd;
	pfd.events = POLLIN;
	diag("ready: holding %s, pid %d", dev_name, (int)getpid());
	t0 = now();
	while (!fatal && now() - t0 < hold_secs) {
		if (traffic && !send_check(&d, a, b, d.cq, 1 + msgs % 4096, msgs)) {
			diag("traffic stopped after %lu checked messages", msgs);
			traffic = false;
		} else if (traffic) {
			msgs++;
		}
		if (poll(&pfd, 1, traffic ? 0 : 100) <= 0)
			continue;
		if (ibv_get_async_event(d.ctx, &ev))
			continue;
		diag("async event: %s (%d)", ibv_event_type_str(ev.event_type),
		     ev.event_type);
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL) {
			fatal = true;
			tf = now() - t0;
		}
		ibv_ack_async_event(&ev);
	}
	check(fatal, "IBV_EVENT_DEVICE_FATAL arrived (%.1f s into the hold, %lu messages checked before)",
	      tf, msgs);
	if (fatal) {
		struct ibv_sge ss = { (uintptr_t)d.buf, 64, d.mr->lkey };
		struct ibv_send_wr swr = { .sg_list = &ss, .num_sge = 1,
					   .opcode = IBV_WR_SEND };
		struct ibv_send_wr *bsw;

		pd = ibv_alloc_pd(d.ctx);
		check(!pd, "after it, alloc_pd fails (errno %d %s)", pd ? 0 : errno,
		      pd ? "none" : strerror(errno));
		err = ibv_post_send(a, &swr, &bsw);
		check(err, "and post_send fails (%d %s)", err, err ? strerror(err) : "success");
	}
	/* Tear down whatever the device lets us; then close. */
	err = ibv_destroy_qp(a);
	err |= ibv_destroy_qp(b);
	err |= ibv_dereg_mr(d.mr);
	err |= ibv_destroy_cq(d.cq);
	err |= ibv_dealloc_pd(d.pd);
	diag("teardown after the hold: %s", err ? "some destroys failed" : "all destroys returned 0");
	check(!ibv_close_device(d.ctx), "close_device");
	return tap_done();
}

/* ----------------------------------------------------------------- main */

static void usage(void)
{
	fprintf(stderr,
		"usage: sroce_hostile MODE -d DEV [-g GIDX] [options]\n"
		"modes: sqflood curstate caps memcg qpnrace churn hold\n"
		"  -d DEV    the RDMA device\n"
		"  -g GIDX   GID index for loopback connections\n"
		"  -n N      churn: cycles (20)\n"
		"  -t SEC    hold: how long to wait for DEVICE_FATAL (60);\n"
		"            qpnrace: how long to race (15)\n"
		"  -l BYTES  memcg: the cgroup's memory.max\n"
		"  -a ADDR   qpnrace: the device's IPv4 address (10.0.0.1)\n"
		"  -L SEC    sqflood: a verb must return within (2.0)\n"
		"  -W SEC    sqflood: stop feeding a verb stuck this long (3.0)\n"
		"  -S SEED   random seed\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode;
	int c;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "d:g:n:t:l:a:L:W:S:")) != -1) {
		switch (c) {
		case 'd': dev_name = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'n': num_cycles = atoi(optarg); break;
		case 't': hold_secs = race_secs = atof(optarg); break;
		case 'l': mem_limit = strtoull(optarg, NULL, 0); break;
		case 'a': target_addr = optarg; break;
		case 'L': op_limit = atof(optarg); break;
		case 'W': flood_stall = atof(optarg); break;
		case 'S': rng_state = strtoull(optarg, NULL, 0) | 1; break;
		default: usage();
		}
	}
	if (!dev_name)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "sqflood") || !strcmp(mode, "curstate") ||
	    !strcmp(mode, "churn") || !strcmp(mode, "hold"))
		if (gid_index < 0)
			usage();
	if (!strcmp(mode, "sqflood"))
		return mode_sqflood();
	if (!strcmp(mode, "curstate"))
		return mode_curstate();
	if (!strcmp(mode, "caps"))
		return mode_caps();
	if (!strcmp(mode, "memcg"))
		return mode_memcg();
	if (!strcmp(mode, "qpnrace"))
		return mode_qpnrace();
	if (!strcmp(mode, "churn"))
		return mode_churn();
	if (!strcmp(mode, "hold"))
		return mode_hold();
	usage();
	return 2;
}
