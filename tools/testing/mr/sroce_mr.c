// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_mr: the MR verbs beyond rdma_rxe on an rxe-ABI device, data
 * checked: re-registration and dma-buf MRs.
 *
 *   sroce_mr rereg  -d DEV -g GIDX [-n CYCLES]
 *   sroce_mr dmabuf -d DEV -g GIDX [-U]
 *
 * Two loopback RC pairs on DEV (GID index GIDX): pair A on PD A, pair B
 * on PD B.
 *
 * rereg: the "target" MR starts on PD A.  The requester of a pair
 * WRITEs and READs the target through its rkey, from a buffer of its own.
 *   trans    rereg to a new buffer: same keys, WRITE and READ land in the
 *            new buffer, the old one is left alone, its addresses fail
 *   access   rereg without remote write: a WRITE fails with a remote
 *            access error and changes nothing, READ works
 *   pd       rereg to PD B: pair A is refused, pair B gets through
 *   errors   the errnos of bad reregs, and a failed rereg changes nothing;
 *            EBUSY while a window is bound to the MR
 *   inflight a thread moves the MR to fresh pages at the same address
 *            CYCLES times while READs and WRITEs run through it: every
 *            completion succeeds and every packet's data (path MTU 1024)
 *            comes whole from one generation of the pages
 *
 * dmabuf: an MR on a udmabuf (memfd pages; -U: there is no /dev/udmabuf,
 * only the errors that need none are checked).  librxe 44 has no
 * reg_dmabuf_mr, so the program sends the uverbs method itself (ioctl).
 *   data     WRITE and READ through its rkey, SEND into it and from it,
 *            WRITE from it (the zero-copy send path): every byte checked
 *            through the memfd's own mapping; past its end fails
 *   errors   a bad fd, an fd that is not a dma-buf, a range past the
 *            buffer, length 0; rereg of a dma-buf MR (EOPNOTSUPP)
 *
 * Prints TAP; exits 0 only if every assertion passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <linux/udmabuf.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "sroce_tap.h"

#define LEN		65536		/* the target buffers and local ones */
#define MSG		4096		/* one transfer: 4 packets of 1024 */
#define MTU_BYTES	1024
#define WC_WAIT		10.0		/* seconds for a completion */
#define IOVA		0x100000000ULL	/* an iova unlike any address */
#define ACC_RW		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

static const char *dev_name;
static int gid_index = -1;
static int cycles = 200;

static struct ibv_context *ctx;
static union ibv_gid gid;

/* A requester and its responder, connected, on one PD and one CQ. */
struct pair {
	const char *name;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *req, *rsp;
	char *lbuf;			/* the requester's own memory */
	struct ibv_mr *lmr;
};

static struct pair pa = { .name = "pair A" }, pb = { .name = "pair B" };

static char *map_buf(void)
{
	void *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bail("mmap");
	return p;
}

/* RESET, INIT, RTR to @dqpn on our own GID, RTS. */
static int qp_connect(struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = ACC_RW;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void pair_connect(struct pair *p)
{
	if (qp_connect(p->req, p->rsp->qp_num) ||
	    qp_connect(p->rsp, p->req->qp_num))
		bail("%s: connect", p->name);
}

static void pair_open(struct pair *p)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 64, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	p->pd = ibv_alloc_pd(ctx);
	p->cq = p->pd ? ibv_create_cq(ctx, 128, NULL, NULL, 0) : NULL;
	if (!p->cq)
		bail("%s: pd, cq", p->name);
	ia.send_cq = p->cq;
	ia.recv_cq = p->cq;
	p->req = ibv_create_qp(p->pd, &ia);
	p->rsp = ibv_create_qp(p->pd, &ia);
	p->lbuf = map_buf();
	p->lmr = ibv_reg_mr(p->pd, p->lbuf, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!p->req || !p->rsp || !p->lmr)
		bail("%s: qps, mr", p->name);
	pair_connect(p);
}

static int post_rdma(struct pair *p, enum ibv_wr_opcode op, size_t loff,
		     uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->lbuf + loff,
		.length = len,
		.lkey = p->lmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(p->req, &wr, &bad);
}

/* One completion of @p's CQ, its status; -1 if none came in time. */
static int wait_wc(struct pair *p, struct ibv_wc *wc)
{
	double end = now() + WC_WAIT;

	while (now() < end) {
		int n = ibv_poll_cq(p->cq, 1, wc);

		if (n < 0)
			return -1;
		if (n)
			return wc->status;
		usleep(200);
	}
	return -1;
}

/*
 * One WRITE or READ of @len bytes between @p's buffer at @loff and
 * @raddr; its completion status (-1: none, or not posted).  A failure
 * leaves the pair in ERR: it is connected again.
 */
static int rdma(struct pair *p, enum ibv_wr_opcode op, size_t loff,
		uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_wc wc;
	int st;

	if (post_rdma(p, op, loff, len, raddr, rkey, 1))
		return -1;
	st = wait_wc(p, &wc);
	if (st) {
		diag("%s: %s to %#" PRIx64 " rkey %#x: status %d (%s)",
		     p->name, op == IBV_WR_RDMA_WRITE ? "WRITE" : "READ",
		     raddr, rkey, st,
		     st > 0 ? ibv_wc_status_str(st) : "no completion");
		pair_connect(p);
	}
	return st;
}

/* @n bytes of a pattern that depends on @seed. */
static void fill(char *buf, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = (char)(seed * 131 + i * 7 + (i >> 8));
}

static bool same(const char *a, unsigned int seed, size_t n)
{
	char *want = malloc(n);
	bool ok;

	if (!want)
		bail("malloc");
	fill(want, n, seed);
	ok = !memcmp(a, want, n);
	free(want);
	return ok;
}

static bool all_bytes(const char *buf, char c, size_t n)
{
	while (n--)
		if (*buf++ != c)
			return false;
	return true;
}

/* WRITE seed's pattern from @p to @addr, and check it arrived at @at. */
static bool write_lands(struct pair *p, struct ibv_mr *mr, uint64_t addr,
			const char *at, unsigned int seed)
{
	fill(p->lbuf, MSG, seed);
	return rdma(p, IBV_WR_RDMA_WRITE, 0, MSG, addr, mr->rkey) == 0 &&
	       same(at, seed, MSG);
}

/* READ from @addr into @p and check it brought seed's pattern. */
static bool read_brings(struct pair *p, struct ibv_mr *mr, uint64_t addr,
			unsigned int seed)
{
	memset(p->lbuf + MSG, 0, MSG);
	return rdma(p, IBV_WR_RDMA_READ, MSG, MSG, addr, mr->rkey) == 0 &&
	       same(p->lbuf + MSG, seed, MSG);
}

/*
 * The rereg command as a provider with rereg_mr sends it (librxe 44 has
 * none: its ibv_rereg_mr() fails in libibverbs with EOPNOTSUPP), through
 * the legacy write() interface, with @iova the MR's new address; then
 * what ibv_rereg_mr() updates in @mr.  The errno, 0 on success.
 */
static int rereg_cmd(uint32_t handle, int flags, uint32_t pd_handle,
		     void *addr, size_t len, uint64_t iova, int access,
		     struct ib_uverbs_rereg_mr_resp *resp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_rereg_mr cmd;
	} req;

	memset(&req, 0, sizeof(req));
	memset(resp, 0, sizeof(*resp));
	req.hdr.command = IB_USER_VERBS_CMD_REREG_MR;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(*resp) / 4;
	req.cmd.response = (uintptr_t)resp;
	req.cmd.mr_handle = handle;
	req.cmd.flags = flags;
	req.cmd.start = (uintptr_t)addr;
	req.cmd.length = len;
	req.cmd.hca_va = iova;
	req.cmd.pd_handle = pd_handle;
	req.cmd.access_flags = access;
	if (write(ctx->cmd_fd, &req, sizeof(req)) != sizeof(req))
		return errno;
	return 0;
}

/* A rereg without new memory or PD of the MR with @handle. */
static int rereg_handle(uint32_t handle, int flags, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;

	return rereg_cmd(handle, flags, 0, NULL, 0, 0, access, &resp);
}

static int rereg_va(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
		    void *addr, size_t len, uint64_t iova, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	int err;

	err = rereg_cmd(mr->handle, flags,
			flags & IBV_REREG_MR_CHANGE_PD ? pd->handle : 0, addr,
			len, iova, access, &resp);
	if (err)
		return err;
	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = len;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	return 0;
}

static int rereg(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
		 size_t len, int access)
{
	return rereg_va(mr, flags, pd, addr, len, (uintptr_t)addr, access);
}

static bool check_errno(int got, int want, const char *what)
{
	return check(got == want, "%s: %s (got %s)", what, strerror(want),
		     got > 0 ? strerror(got) : got ? "failure, no errno" : "success");
}

/* ---------------------------------------------------------------- cases */

static char *buf1, *buf2;
static struct ibv_mr *tmr;	/* the target, on buf1 then buf2 */

static void case_trans(void)
{
	uint32_t lkey = tmr->lkey, rkey = tmr->rkey;
	int err;

	check(write_lands(&pa, tmr, (uintptr_t)buf1 + 8192, buf1 + 8192, 1),
	      "before: WRITE lands in the first buffer");
	memset(buf1, 0x5a, LEN);
	fill(buf2 + LEN / 2 - MSG, MSG, 2);
	err = rereg(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf2, LEN / 2,
		    0);
	check_errno(err, 0, "trans: rereg to a new buffer of half the size");
	check(tmr->lkey == lkey && tmr->rkey == rkey,
	      "trans: keys kept (lkey %#x rkey %#x, were %#x %#x)",
	      tmr->lkey, tmr->rkey, lkey, rkey);
	check(write_lands(&pa, tmr, (uintptr_t)buf2 + 4096, buf2 + 4096, 3),
	      "trans: WRITE through the same rkey lands in the new buffer");
	check(read_brings(&pa, tmr, (uintptr_t)buf2 + 4096, 3),
	      "trans: READ through it brings the new buffer's data");
	check(rdma(&pa, IBV_WR_RDMA_WRITE, 0, MSG, (uintptr_t)buf1 + 8192,
		   tmr->rkey) == IBV_WC_REM_ACCESS_ERR,
	      "trans: WRITE to the old buffer's address: remote access error");
	check(rdma(&pa, IBV_WR_RDMA_WRITE, 0, MSG,
		   (uintptr_t)buf2 + LEN / 2 - MSG / 2, tmr->rkey) ==
	      IBV_WC_REM_ACCESS_ERR,
	      "trans: WRITE past the new length: remote access error");
	check(all_bytes(buf1, 0x5a, LEN), "trans: the old buffer is left alone");
	err = rereg_va(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf2,
		       LEN / 2, IOVA, 0);
	check_errno(err, 0, "trans: the same memory at iova 0x100000000");
	check(write_lands(&pa, tmr, IOVA + 4096, buf2 + 4096, 12) &&
	      read_brings(&pa, tmr, IOVA + 4096, 12),
	      "trans: WRITE and READ at that iova reach the memory");
	err = rereg(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf2, LEN / 2,
		    0);
	check_errno(err, 0, "trans: back to iova == address");
	/* The last bytes of the new, shorter registration. */
	check(rdma(&pa, IBV_WR_RDMA_READ, 0, MSG, (uintptr_t)buf2 + LEN / 2 - MSG,
		   tmr->rkey) == 0 && same(pa.lbuf, 2, MSG),
	      "trans: the new buffer's end is reachable");
}

static void case_access(void)
{
	int err;

	err = rereg(tmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
		    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	check_errno(err, 0, "access: rereg to LOCAL_WRITE | REMOTE_READ");
	fill(buf2, MSG, 4);
	fill(pa.lbuf, MSG, 5);
	check(rdma(&pa, IBV_WR_RDMA_WRITE, 0, MSG, (uintptr_t)buf2,
		   tmr->rkey) == IBV_WC_REM_ACCESS_ERR,
	      "access: WRITE fails with a remote access error");
	check(same(buf2, 4, MSG), "access: the refused WRITE changed nothing");
	check(read_brings(&pa, tmr, (uintptr_t)buf2, 4),
	      "access: READ still works");
	err = rereg(tmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0, ACC_RW);
	check_errno(err, 0, "access: rereg back to remote write");
	check(write_lands(&pa, tmr, (uintptr_t)buf2, buf2, 6),
	      "access: WRITE works again");
}

static void case_pd(void)
{
	int err;

	err = rereg(tmr, IBV_REREG_MR_CHANGE_PD, pb.pd, NULL, 0, 0);
	check_errno(err, 0, "pd: rereg to PD B");
	fill(buf2, MSG, 7);
	check(rdma(&pa, IBV_WR_RDMA_WRITE, 0, MSG, (uintptr_t)buf2,
		   tmr->rkey) == IBV_WC_REM_ACCESS_ERR && same(buf2, 7, MSG),
	      "pd: PD A's QP is refused (remote access error, nothing written)");
	check(write_lands(&pb, tmr, (uintptr_t)buf2, buf2, 8),
	      "pd: PD B's QP WRITEs into it");
	check(read_brings(&pb, tmr, (uintptr_t)buf2, 8),
	      "pd: PD B's QP READs from it");
	err = rereg(tmr, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS |
		    IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf1, LEN, ACC_RW);
	check_errno(err, 0, "all three: back to PD A and the first buffer");
	check(write_lands(&pa, tmr, (uintptr_t)buf1 + LEN - MSG,
			  buf1 + LEN - MSG, 9) &&
	      rdma(&pb, IBV_WR_RDMA_WRITE, 0, MSG, (uintptr_t)buf1,
		   tmr->rkey) == IBV_WC_REM_ACCESS_ERR,
	      "all three: PD A's QP gets through to the first buffer, PD B's not");
}

static bool bind_mw(struct ibv_mw *mw, struct ibv_mr *mr, uint64_t len)
{
	struct ibv_mw_bind bind = {
		.wr_id = 2,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = (uintptr_t)mr->addr,
			       .length = len,
			       .mw_access_flags = IBV_ACCESS_REMOTE_READ },
	};
	struct ibv_wc wc;

	return !ibv_bind_mw(pa.req, mw, &bind) && wait_wc(&pa, &wc) == 0;
}

static void case_errors(void)
{
	char *ro = map_buf(), *gone = map_buf();
	struct ibv_mr *romr, *mwmr;
	struct ibv_mw *mw;

	check_errno(rereg(tmr, 0, pa.pd, NULL, 0, 0), EINVAL, "flags 0");
	check_errno(rereg(tmr, 1 << 3, pa.pd, NULL, 0, 0), EOPNOTSUPP,
		    "an unknown flag");
	check_errno(rereg_va(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf2,
			     LEN, (uintptr_t)buf2 + 1, 0), EINVAL,
		    "an iova at another page offset than the memory");
	check_errno(rereg(tmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
			  IBV_ACCESS_REMOTE_WRITE), EINVAL,
		    "remote write without local write");
	check_errno(rereg(tmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
			  ACC_RW | IBV_ACCESS_ZERO_BASED), EOPNOTSUPP,
		    "an access flag sroce does not support (zero-based)");
	check_errno(rereg(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf2,
			  1ULL << 40, 0), EINVAL, "a 1 TiB length");
	munmap(gone, LEN);
	check_errno(rereg(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, gone,
			  LEN, 0), EFAULT, "unmapped memory");
	check_errno(rereg(tmr, IBV_REREG_MR_CHANGE_TRANSLATION |
			  IBV_REREG_MR_CHANGE_ACCESS, pa.pd, buf2, LEN,
			  ACC_RW | IBV_ACCESS_ZERO_BASED), EOPNOTSUPP,
		    "the same with new memory");
	check(write_lands(&pa, tmr, (uintptr_t)buf1, buf1, 10) &&
	      read_brings(&pa, tmr, (uintptr_t)buf1, 10),
	      "the failed reregs changed nothing: the first buffer still works");

	/* Pinned for reading only: it cannot be made writable in place. */
	romr = ibv_reg_mr(pa.pd, ro, LEN, IBV_ACCESS_REMOTE_READ);
	if (!romr)
		bail("reg_mr read-only");
	check_errno(rereg(romr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
			  ACC_RW), EACCES,
		    "read-only pages made writable in place");
	check_errno(rereg(romr, IBV_REREG_MR_CHANGE_ACCESS |
			  IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, ro, LEN,
			  ACC_RW), 0,
		    "the same with new pinning (TRANS)");
	check(write_lands(&pa, romr, (uintptr_t)ro, ro, 11),
	      "... and then WRITEs land in it");
	check(!ibv_dereg_mr(romr), "dereg the reregistered MR");

	mwmr = ibv_reg_mr(pa.pd, ro, LEN, ACC_RW | IBV_ACCESS_MW_BIND);
	mw = mwmr ? ibv_alloc_mw(pa.pd, IBV_MW_TYPE_1) : NULL;
	if (!mw || !bind_mw(mw, mwmr, MSG))
		bail("window bound to an MR");
	check_errno(rereg(mwmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
			  ACC_RW), EBUSY, "a window is bound to the MR");
	check(bind_mw(mw, mwmr, 0), "unbind the window");
	check_errno(rereg(mwmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
			  ACC_RW), 0, "no window any more");
	check(!ibv_dealloc_mw(mw) && !ibv_dereg_mr(mwmr),
	      "dealloc the window, dereg the MR");
	munmap(ro, LEN);
}

/* ------------------------------------------------------------ in flight */

/*
 * The target is buf1 (LEN bytes, iova buf1).  Each generation g maps
 * fresh pages at buf1 and fills them with 8-byte words g << 32 | index,
 * then moves the MR onto them.  READs must bring, in each packet, words
 * of one generation with the right index.
 */
static atomic_int gen_done;
static atomic_bool stop, mover_done;

static void fill_gen(uint64_t *w, uint32_t g)
{
	size_t i;

	for (i = 0; i < LEN / 8; i++)
		w[i] = (uint64_t)g << 32 | i;
}

static void *mover(void *arg)
{
	uint32_t g;

	(void)arg;
	for (g = 1; g <= (uint32_t)cycles && !atomic_load(&stop); g++) {
		if (mmap(buf1, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE |
			 MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			break;
		fill_gen((uint64_t *)buf1, g);
		if (rereg(tmr, IBV_REREG_MR_CHANGE_TRANSLATION, pa.pd, buf1,
			  LEN, 0))
			break;
		atomic_store(&gen_done, g);
	}
	atomic_store(&mover_done, true);
	return NULL;
}

/* Check a READ of MSG bytes from word @first: -1 if good, else the word. */
static long bad_word(const uint64_t *w, size_t first)
{
	size_t i, per = MTU_BYTES / 8;

	for (i = 0; i < MSG / 8; i++) {
		if ((uint32_t)w[i] != first + i ||
		    (w[i] >> 32) != (w[i - i % per] >> 32) ||
		    (w[i] >> 32) > (uint64_t)cycles)
			return i;
	}
	return -1;
}

/* The READ or WRITE in flight from each slot of pair A's buffer. */
#define DEPTH	8
static struct { size_t first; bool rd; } slot[DEPTH + 1];

/* Post the @n-th transfer from slot @s (1..DEPTH, MSG bytes each). */
static int post_slot(unsigned int s, uint64_t n)
{
	bool rd = n % 2 == 0;
	/* READs check the first half; WRITEs go to the second. */
	size_t first = (n / 2 % (LEN / MSG / 2) + (rd ? 0 : LEN / MSG / 2)) *
		       (MSG / 8);

	slot[s].first = first;
	slot[s].rd = rd;
	return post_rdma(&pa, rd ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
			 s * MSG, MSG, (uintptr_t)(buf1 + first * 8),
			 tmr->rkey, s);
}

static void case_inflight(void)
{
	unsigned int reads = 0, writes = 0, errors = 0, torn = 0, mixed = 0;
	unsigned int s, out = 0;
	struct ibv_wc wc;
	pthread_t th;
	uint64_t n = 0;

	fill_gen((uint64_t *)buf1, 0);
	if (pthread_create(&th, NULL, mover, NULL))
		bail("pthread_create");
	for (s = 1; s <= DEPTH; s++)
		out += !post_slot(s, n++);
	while (out) {
		const uint64_t *w;
		long bad;

		if (wait_wc(&pa, &wc) != 0) {
			errors++;
			break;
		}
		out--;
		s = wc.wr_id;
		if (slot[s].rd) {
			reads++;
			w = (const uint64_t *)(pa.lbuf + s * MSG);
			mixed += w[0] >> 32 != w[MSG / 8 - 1] >> 32;
			bad = bad_word(w, slot[s].first);
			if (bad >= 0 && torn++ < 3)
				diag("READ at word %zu: word %ld is %#" PRIx64,
				     slot[s].first, bad, w[bad]);
		} else {
			writes++;
		}
		/* The slot is checked: use it again. */
		if (!atomic_load(&mover_done)) {
			if (post_slot(s, n++))
				errors++;
			else
				out++;
		}
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	diag("%d reregs, %u READs (%u of them across a rereg), %u WRITEs",
	     atomic_load(&gen_done), reads, mixed, writes);
	check(atomic_load(&gen_done) == cycles,
	      "inflight: %d reregs to fresh pages", cycles);
	check(!errors, "inflight: every READ and WRITE completed successfully");
	check(!torn, "inflight: every READ packet from one generation (%u not)",
	      torn);
}

/* -------------------------------------------------------------- dma-buf */

static bool no_udmabuf;

/* A dma-buf MR: what reg_dmabuf_mr returns, as far as the tests need. */
struct dmr {
	uint32_t handle, lkey, rkey;
};

static void put_attr(struct ib_uverbs_attr *a, uint16_t id, uint16_t len,
		     uint64_t data)
{
	a->attr_id = id;
	a->len = len;
	a->flags = UVERBS_ATTR_F_MANDATORY;
	a->data = data;
}

/* UVERBS_METHOD_REG_DMABUF_MR through the ioctl; the errno, 0 if done. */
static int reg_dmabuf(struct ibv_pd *pd, int fd, uint64_t offset,
		      uint64_t len, uint64_t iova, int access, struct dmr *m)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[9];
	} req;
	struct ib_uverbs_attr *a = req.attr;

	memset(&req, 0, sizeof(req));
	req.hdr.length = sizeof(req);
	req.hdr.object_id = UVERBS_OBJECT_MR;
	req.hdr.method_id = UVERBS_METHOD_REG_DMABUF_MR;
	req.hdr.num_attrs = 9;
	req.hdr.driver_id = RDMA_DRIVER_RXE;	/* the uapi's: sroce's is rxe's */
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_HANDLE, 0, 0);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE, 0, pd->handle);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_OFFSET, 8, offset);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_LENGTH, 8, len);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_IOVA, 8, iova);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_FD, 4, (uint32_t)fd);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS, 4, access);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY, 4,
		 (uintptr_t)&m->lkey);
	put_attr(a++, UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY, 4,
		 (uintptr_t)&m->rkey);
	if (ioctl(pd->context->cmd_fd, RDMA_VERBS_IOCTL, &req))
		return errno;
	m->handle = req.attr[0].data;
	return 0;
}

/* DEREG_MR by handle (librxe's ibv_dereg_mr() wants its own ibv_mr). */
static int dereg_handle(uint32_t handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_dereg_mr cmd;
	} req;

	memset(&req, 0, sizeof(req));
	req.hdr.command = IB_USER_VERBS_CMD_DEREG_MR;
	req.hdr.in_words = sizeof(req) / 4;
	req.cmd.mr_handle = handle;
	if (write(ctx->cmd_fd, &req, sizeof(req)) != sizeof(req))
		return errno;
	return 0;
}

/* A dma-buf of @len bytes from udmabuf; its memfd mapped at *@view. */
static int udmabuf_new(size_t len, char **view)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = len };
	int dev, fd, memfd;

	dev = open("/dev/udmabuf", O_RDWR);
	memfd = memfd_create("sroce", MFD_ALLOW_SEALING);
	if (dev < 0 || memfd < 0 || ftruncate(memfd, len) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		bail("udmabuf: /dev/udmabuf, memfd");
	c.memfd = memfd;
	fd = ioctl(dev, UDMABUF_CREATE, &c);
	*view = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (fd < 0 || *view == MAP_FAILED)
		bail("UDMABUF_CREATE");
	close(memfd);
	close(dev);
	return fd;
}

/* @p's responder posts a receive of @len bytes into @lkey at @addr. */
static void post_recv_rsp(struct pair *p, uint64_t addr, uint32_t len,
			  uint32_t lkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(p->rsp, &wr, &bad))
		bail("post_recv");
}

/* A SEND of @len bytes from @lkey at @addr; both completions good? */
static bool send_ok(struct pair *p, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = 8, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	return !ibv_post_send(p->req, &wr, &bad) && wait_wc(p, &wc) == 0 &&
	       wait_wc(p, &wc) == 0;
}

#define DB_OFF		4096		/* the MR starts a page into the buffer */
#define DB_IOVA		0x200000000ULL

static void case_dmabuf_data(void)
{
	uint32_t len = LEN - 2 * DB_OFF;
	struct dmr m;
	char *view;
	int fd, err;

	fd = udmabuf_new(LEN, &view);
	err = reg_dmabuf(pa.pd, fd, DB_OFF, len, DB_IOVA, ACC_RW, &m);
	if (!check_errno(err, 0, "reg_dmabuf_mr of a udmabuf, from its 2nd page"))
		return;
	check(m.lkey == m.rkey, "lkey == rkey (%#x)", m.lkey);
	memset(view, 0x5a, LEN);

	fill(pa.lbuf, MSG, 21);
	check(rdma(&pa, IBV_WR_RDMA_WRITE, 0, MSG, DB_IOVA + 8192, m.rkey) == 0 &&
	      same(view + DB_OFF + 8192, 21, MSG),
	      "WRITE through its rkey lands in the memfd's pages");
	fill(view + DB_OFF + len - MSG, MSG, 22);
	memset(pa.lbuf + MSG, 0, MSG);
	check(rdma(&pa, IBV_WR_RDMA_READ, MSG, MSG, DB_IOVA + len - MSG,
		   m.rkey) == 0 && same(pa.lbuf + MSG, 22, MSG),
	      "READ through it brings the memfd's data (its last bytes)");
	fill(pa.lbuf, MSG, 23);
	post_recv_rsp(&pa, DB_IOVA + 16384, MSG, m.lkey);
	check(send_ok(&pa, (uintptr_t)pa.lbuf, MSG, pa.lmr->lkey) &&
	      same(view + DB_OFF + 16384, 23, MSG),
	      "SEND into it (its lkey in a receive)");
	fill(view + DB_OFF + 20480, MSG, 24);
	memset(pa.lbuf + 2 * MSG, 0, MSG);
	post_recv_rsp(&pa, (uintptr_t)pa.lbuf + 2 * MSG, MSG, pa.lmr->lkey);
	check(send_ok(&pa, DB_IOVA + 20480, MSG, m.lkey) &&
	      same(pa.lbuf + 2 * MSG, 24, MSG),
	      "SEND from it (its lkey in a send)");
	fill(view + DB_OFF + 24576, 3 * MSG, 25);
	memset(buf1, 0, 3 * MSG);
	{
		struct ibv_sge sge = { .addr = DB_IOVA + 24576,
				       .length = 3 * MSG, .lkey = m.lkey };
		struct ibv_send_wr wr = {
			.wr_id = 9, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uintptr_t)buf1,
				     .rkey = tmr->rkey },
		};
		struct ibv_send_wr *bad;
		struct ibv_wc wc;

		check(!ibv_post_send(pa.req, &wr, &bad) &&
		      wait_wc(&pa, &wc) == 0 && same(buf1, 25, 3 * MSG),
		      "WRITE of 12 KiB from it into a plain MR");
	}
	check(rdma(&pa, IBV_WR_RDMA_WRITE, 0, MSG, DB_IOVA + len - MSG / 2,
		   m.rkey) == IBV_WC_REM_ACCESS_ERR,
	      "WRITE past its end: remote access error");
	check(all_bytes(view, 0x5a, DB_OFF) &&
	      all_bytes(view + DB_OFF + len, 0x5a, LEN - DB_OFF - len),
	      "the buffer outside the MR is left alone");
	check_errno(rereg_handle(m.handle, IBV_REREG_MR_CHANGE_ACCESS, ACC_RW),
		    EOPNOTSUPP, "rereg of a dma-buf MR");
	check_errno(dereg_handle(m.handle), 0, "dereg the dma-buf MR");
	check(rdma(&pa, IBV_WR_RDMA_READ, MSG, MSG, DB_IOVA, m.rkey) ==
	      IBV_WC_REM_ACCESS_ERR, "its rkey is gone");
	munmap(view, LEN);
	close(fd);
}

static void case_dmabuf_errors(void)
{
	int memfd = memfd_create("sroce-plain", 0), fd;
	struct dmr m;
	char *view;

	if (memfd < 0 || ftruncate(memfd, LEN))
		bail("memfd");
	check_errno(reg_dmabuf(pa.pd, -1, 0, LEN, 0, ACC_RW, &m), EBADF,
		    "dma-buf fd -1");
	check_errno(reg_dmabuf(pa.pd, memfd, 0, LEN, 0, ACC_RW, &m), EINVAL,
		    "an fd that is not a dma-buf (a memfd)");
	close(memfd);
	if (no_udmabuf)
		return;
	fd = udmabuf_new(LEN, &view);
	check_errno(reg_dmabuf(pa.pd, fd, DB_OFF, LEN, 0, ACC_RW, &m), EINVAL,
		    "a range past the buffer's end");
	check_errno(reg_dmabuf(pa.pd, fd, 0, 0, 0, ACC_RW, &m), EINVAL,
		    "length 0");
	check_errno(reg_dmabuf(pa.pd, fd, 0, LEN, 0, IBV_ACCESS_REMOTE_WRITE,
			       &m), EINVAL, "remote write without local write");
	munmap(view, LEN);
	close(fd);
}

static void mode_dmabuf(void)
{
	struct ibv_mr *mr;
	char *view;
	int fd;

	if (!no_udmabuf) {
		fd = udmabuf_new(LEN, &view);
		errno = 0;
		mr = ibv_reg_dmabuf_mr(pa.pd, 0, LEN, 0, fd, ACC_RW);
		diag("ibv_reg_dmabuf_mr() of this libibverbs and provider: %s, "
		     "errno %d (%s)", mr ? "an MR" : "NULL", errno,
		     strerror(errno));
		if (mr)
			ibv_dereg_mr(mr);
		munmap(view, LEN);
		close(fd);
		case_dmabuf_data();
	}
	case_dmabuf_errors();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int c;

	if (strcmp(mode, "rereg") && strcmp(mode, "dmabuf"))
		bail("usage: %s rereg|dmabuf -d DEV -g GIDX [-n CYCLES] [-U]",
		     argv[0]);
	optind = 2;
	while ((c = getopt(argc, argv, "d:g:n:U")) != -1) {
		switch (c) {
		case 'd':
			dev_name = optarg;
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		case 'n':
			cycles = atoi(optarg);
			break;
		case 'U':
			no_udmabuf = true;
			break;
		default:
			return 2;
		}
	}
	if (!dev_name || gid_index < 0)
		bail("-d DEV -g GIDX needed");
	ctx = open_ctx(dev_name);
	if (!ctx || ibv_query_gid(ctx, 1, gid_index, &gid))
		bail("open %s, gid %d", dev_name, gid_index);
	pair_open(&pa);
	pair_open(&pb);
	buf1 = map_buf();
	buf2 = map_buf();
	tmr = ibv_reg_mr(pa.pd, buf1, LEN, ACC_RW);
	if (!tmr)
		bail("reg_mr");
	if (!strcmp(mode, "dmabuf")) {
		mode_dmabuf();
		return tap_done();
	}

	errno = 0;
	c = ibv_rereg_mr(tmr, IBV_REREG_MR_CHANGE_ACCESS, pa.pd, NULL, 0,
			 ACC_RW);
	diag("ibv_rereg_mr() of this libibverbs and provider: %d, errno %d (%s)",
	     c, errno, strerror(errno));
	case_trans();
	case_access();
	case_pd();
	case_errors();
	case_inflight();
	return tap_done();
}
