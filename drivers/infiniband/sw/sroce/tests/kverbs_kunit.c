// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the work-request patterns of the kernel's RDMA storage
 * and file protocols, posted through the core's kernel verbs to a live
 * sroce device: two RC QPs on it, connected to each other over the
 * device's own IPv4 GID.  The test that loads sroce_kunit.ko creates the
 * device first (01-kunit.sh); without one, every case is skipped.
 *
 * What it proves, each a pattern a ULP posts:
 *  - a REG_MR per segment, two or more in a row, unsignaled, chained
 *    before a signaled SEND (rpcrdma's frwr_send(), SRP, iSER): the SEND
 *    completes and the peer can WRITE through both new rkeys.  Before
 *    "sroce: a local operation retires at once" the second REG_MR never
 *    started and the send queue stopped for good;
 *  - a chain of LOCAL_INVs, all unsignaled but the last (rpcrdma's
 *    frwr_unmap_sync()): the last completes, and the peer's access
 *    through an invalidated rkey then fails with a remote access error;
 *  - SEND_WITH_INV from the peer (svcrdma, nvmet, srpt): the receive
 *    completion says IB_WC_WITH_INVALIDATE with the rkey, and the MR can
 *    be registered again;
 *  - RDMA READs with many SGEs, many in flight, only the last signaled
 *    (rdma_rw on a target): every byte lands where its SGE says;
 *  - the steady state of an NFS client: LOCAL_INV of the last round's
 *    MR, REG_MR of the next one and a SEND, 32 rounds in a row.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include <sroce/compat.h>

#define KV_PAGES	16
#define KV_BYTES	(KV_PAGES * PAGE_SIZE)
#define KV_WAIT_MS	5000

/* The sroce device to test on, from the client's add callback. */
static struct ib_device *kv_dev;

static int kv_add(struct ib_device *dev)
{
	if (!kv_dev && dev->ops.driver_id == RDMA_DRIVER_RXE &&
	    !strncmp(dev_name(&dev->dev), "sroce", 5))
		kv_dev = dev;
	return 0;
}

static void kv_remove(struct ib_device *dev, void *client_data)
{
	if (kv_dev == dev)
		kv_dev = NULL;
}

static struct ib_client kv_client = {
	.name = "sroce_kverbs_kunit",
	.add = kv_add,
	.remove = kv_remove,
};

/* One side: a QP with its own CQs and a buffer of KV_PAGES pages. */
struct kv_side {
	struct ib_cq *scq, *rcq;
	struct ib_qp *qp;
	struct page *pages;
	u8 *buf;
	u64 dma;
};

struct kv_ctx {
	struct ib_pd *pd;
	u8 gid_index;
	struct kv_side a, b;
};

/* The index of the device's RoCE v2 GID of an IPv4 address. */
static int kv_find_gid(struct ib_device *dev)
{
	const struct ib_gid_attr *attr;
	int i, found = -ENOENT;

	for (i = 0; i < 16 && found < 0; i++) {
		attr = rdma_get_gid_attr(dev, 1, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw))
			found = i;
		rdma_put_gid_attr(attr);
	}
	return found;
}

static int kv_side_init(struct kunit *test, struct kv_ctx *c,
			struct kv_side *s)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 256 };
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = 128, .max_recv_wr = 32,
			.max_send_sge = 8, .max_recv_sge = 4,
		},
	};

	s->scq = ib_create_cq(kv_dev, NULL, NULL, NULL, &cq_attr);
	if (IS_ERR(s->scq))
		return PTR_ERR(s->scq);
	s->rcq = ib_create_cq(kv_dev, NULL, NULL, NULL, &cq_attr);
	if (IS_ERR(s->rcq))
		return PTR_ERR(s->rcq);
	init.send_cq = s->scq;
	init.recv_cq = s->rcq;
	s->qp = ib_create_qp(c->pd, &init);
	if (IS_ERR(s->qp))
		return PTR_ERR(s->qp);
	s->pages = alloc_pages(GFP_KERNEL | __GFP_ZERO, get_order(KV_BYTES));
	if (!s->pages)
		return -ENOMEM;
	s->buf = page_address(s->pages);
	s->dma = ib_dma_map_single(kv_dev, s->buf, KV_BYTES, DMA_BIDIRECTIONAL);
	return ib_dma_mapping_error(kv_dev, s->dma) ? -ENOMEM : 0;
}

/* INIT, RTR, RTS: @s connected to @peer over the device's own GID. */
static int kv_connect(struct kv_ctx *c, struct kv_side *s, struct kv_side *peer)
{
	struct ib_qp_attr attr = {};
	union ib_gid gid;
	int err;

	attr.qp_state = IB_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			       IB_ACCESS_REMOTE_WRITE;
	err = ib_modify_qp(s->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;

	err = rdma_query_gid(kv_dev, 1, c->gid_index, &gid);
	if (err)
		return err;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = peer->qp->qp_num;
	attr.rq_psn = 0x100;
	attr.max_dest_rd_atomic = 16;
	attr.min_rnr_timer = 1;
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, &gid, 0, c->gid_index, 64, 0);
	err = ib_modify_qp(s->qp, &attr, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0x100;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 16;
	return ib_modify_qp(s->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

static void kv_side_exit(struct kv_side *s)
{
	if (!IS_ERR_OR_NULL(s->qp))
		ib_destroy_qp(s->qp);
	if (!IS_ERR_OR_NULL(s->scq))
		ib_destroy_cq(s->scq);
	if (!IS_ERR_OR_NULL(s->rcq))
		ib_destroy_cq(s->rcq);
	if (s->pages) {
		ib_dma_unmap_single(kv_dev, s->dma, KV_BYTES, DMA_BIDIRECTIONAL);
		__free_pages(s->pages, get_order(KV_BYTES));
	}
}

static int kv_init(struct kunit *test)
{
	struct kv_ctx *c;
	int err;

	if (!kv_dev)
		kunit_skip(test, "no sroce device (01-kunit.sh makes sroce0)");
	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	test->priv = c;
	err = kv_find_gid(kv_dev);
	if (err < 0)
		kunit_skip(test, "sroce device has no IPv4 RoCE v2 GID");
	c->gid_index = err;
	c->pd = ib_alloc_pd(kv_dev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->pd));
	KUNIT_ASSERT_EQ(test, kv_side_init(test, c, &c->a), 0);
	KUNIT_ASSERT_EQ(test, kv_side_init(test, c, &c->b), 0);
	KUNIT_ASSERT_EQ(test, kv_connect(c, &c->a, &c->b), 0);
	KUNIT_ASSERT_EQ(test, kv_connect(c, &c->b, &c->a), 0);
	return 0;
}

static void kv_exit(struct kunit *test)
{
	struct kv_ctx *c = test->priv;

	if (!c)
		return;
	kv_side_exit(&c->a);
	kv_side_exit(&c->b);
	if (!IS_ERR_OR_NULL(c->pd))
		ib_dealloc_pd(c->pd);
}

/* The next completion on @cq, or -ETIMEDOUT after KV_WAIT_MS. */
static int kv_poll(struct ib_cq *cq, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(KV_WAIT_MS);

	do {
		if (ib_poll_cq(cq, 1, wc) == 1)
			return 0;
		usleep_range(100, 200);
	} while (time_before(jiffies, end));
	return -ETIMEDOUT;
}

/* A completion of @wr_id with @status and, unless < 0, @opcode. */
static void kv_expect_wc_op(struct kunit *test, struct ib_cq *cq, u64 wr_id,
			    enum ib_wc_status status, int opcode)
{
	struct ib_wc wc = {};

	KUNIT_ASSERT_EQ_MSG(test, kv_poll(cq, &wc), 0,
			    "no completion for wr_id %llu", wr_id);
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	KUNIT_EXPECT_EQ_MSG(test, wc.status, status, "wr_id %llu: %s", wr_id,
			    ib_wc_status_msg(wc.status));
	if (opcode >= 0)
		KUNIT_EXPECT_EQ(test, wc.opcode, opcode);
}

static void kv_expect_wc(struct kunit *test, struct ib_cq *cq, u64 wr_id,
			 enum ib_wc_status status)
{
	kv_expect_wc_op(test, cq, wr_id, status, -1);
}

static void kv_post_recv(struct kunit *test, struct kv_side *s, u64 wr_id)
{
	struct ib_sge sge = {
		.addr = s->dma, .length = PAGE_SIZE,
		.lkey = s->qp->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };

	KUNIT_ASSERT_EQ(test, ib_post_recv(s->qp, &wr, NULL), 0);
}

/* A fast-reg MR over pages [first, first + n) of @s's buffer. */
static struct ib_mr *kv_map_mr(struct kunit *test, struct kv_ctx *c,
			       struct kv_side *s, int first, int n)
{
	struct scatterlist *sg = kunit_kcalloc(test, n, sizeof(*sg), GFP_KERNEL);
	struct ib_mr *mr;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, sg);
	mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, KV_PAGES);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	sg_init_table(sg, n);
	for (i = 0; i < n; i++) {
		sg_set_page(&sg[i], s->pages + first + i, PAGE_SIZE, 0);
		sg_dma_address(&sg[i]) = s->dma + (first + i) * PAGE_SIZE;
		sg_dma_len(&sg[i]) = PAGE_SIZE;
	}
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, sg, n, NULL, PAGE_SIZE), n);
	return mr;
}

/* A REG_MR of @mr with the next key, for a chain. */
static void kv_reg_wr(struct ib_reg_wr *reg, struct ib_mr *mr, u64 wr_id,
		      struct ib_send_wr *next)
{
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	memset(reg, 0, sizeof(*reg));
	reg->wr.opcode = IB_WR_REG_MR;
	reg->wr.wr_id = wr_id;
	reg->wr.next = next;
	reg->mr = mr;
	reg->key = mr->rkey;
	reg->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		      IB_ACCESS_REMOTE_WRITE;
}

static void kv_inv_wr(struct ib_send_wr *wr, u32 rkey, u64 wr_id, bool signal,
		      struct ib_send_wr *next)
{
	memset(wr, 0, sizeof(*wr));
	wr->opcode = IB_WR_LOCAL_INV;
	wr->wr_id = wr_id;
	wr->ex.invalidate_rkey = rkey;
	wr->send_flags = signal ? IB_SEND_SIGNALED : 0;
	wr->next = next;
}

/* A small SEND from @s's buffer; the peer must have a receive posted. */
static void kv_send_wr(struct ib_send_wr *wr, struct ib_sge *sge,
		       struct kv_side *s, u64 wr_id)
{
	*sge = (struct ib_sge){ .addr = s->dma, .length = 64,
				.lkey = s->qp->pd->local_dma_lkey };
	memset(wr, 0, sizeof(*wr));
	wr->opcode = IB_WR_SEND;
	wr->wr_id = wr_id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = IB_SEND_SIGNALED;
}

/* @from WRITEs @len bytes of @fill to @va/@rkey; expect @status. */
static void kv_write(struct kunit *test, struct kv_side *from, u64 va,
		     u32 rkey, u32 len, u8 fill, enum ib_wc_status status)
{
	struct ib_sge sge = { .addr = from->dma + KV_BYTES - len, .length = len,
			      .lkey = from->qp->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .opcode = IB_WR_RDMA_WRITE, .wr_id = 77,
			.sg_list = &sge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = va, .rkey = rkey,
	};

	memset(from->buf + KV_BYTES - len, fill, len);
	KUNIT_ASSERT_EQ(test, ib_post_send(from->qp, &wr.wr, NULL), 0);
	kv_expect_wc(test, from->scq, 77, status);
}

static void kv_two_reg_mr_test(struct kunit *test)
{
	struct kv_ctx *c = test->priv;
	struct ib_mr *m1 = kv_map_mr(test, c, &c->a, 2, 2);
	struct ib_mr *m2 = kv_map_mr(test, c, &c->a, 4, 3);
	struct ib_reg_wr r1, r2;
	struct ib_send_wr send;
	struct ib_sge sge;

	kv_post_recv(test, &c->b, 1);
	kv_send_wr(&send, &sge, &c->a, 3);
	kv_reg_wr(&r2, m2, 2, &send);
	kv_reg_wr(&r1, m1, 1, &r2.wr);
	KUNIT_ASSERT_EQ(test, ib_post_send(c->a.qp, &r1.wr, NULL), 0);
	kv_expect_wc(test, c->a.scq, 3, IB_WC_SUCCESS);
	kv_expect_wc(test, c->b.rcq, 1, IB_WC_SUCCESS);

	kv_write(test, &c->b, m1->iova, m1->rkey, 2 * PAGE_SIZE, 0x11,
		 IB_WC_SUCCESS);
	kv_write(test, &c->b, m2->iova + 100, m2->rkey, 2 * PAGE_SIZE, 0x22,
		 IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, c->a.buf[2 * PAGE_SIZE], 0x11);
	KUNIT_EXPECT_EQ(test, c->a.buf[4 * PAGE_SIZE - 1], 0x11);
	KUNIT_EXPECT_EQ(test, c->a.buf[4 * PAGE_SIZE + 100], 0x22);
	KUNIT_EXPECT_EQ(test, c->a.buf[6 * PAGE_SIZE + 99], 0x22);
	KUNIT_EXPECT_EQ(test, c->a.buf[6 * PAGE_SIZE + 100], 0);
	ib_dereg_mr(m1);
	ib_dereg_mr(m2);
}

static void kv_local_inv_chain_test(struct kunit *test)
{
	struct kv_ctx *c = test->priv;
	struct ib_mr *mr[4];
	struct ib_reg_wr reg[4];
	struct ib_send_wr inv[4];
	int i;

	for (i = 0; i < 4; i++)
		mr[i] = kv_map_mr(test, c, &c->a, 2 * i, 2);
	for (i = 3; i >= 0; i--)
		kv_reg_wr(&reg[i], mr[i], 10 + i, i < 3 ? &reg[i + 1].wr : NULL);
	reg[3].wr.send_flags = IB_SEND_SIGNALED;
	KUNIT_ASSERT_EQ(test, ib_post_send(c->a.qp, &reg[0].wr, NULL), 0);
	kv_expect_wc(test, c->a.scq, 13, IB_WC_SUCCESS);

	for (i = 3; i >= 0; i--)
		kv_inv_wr(&inv[i], mr[i]->rkey, 20 + i, i == 3,
			  i < 3 ? &inv[i + 1] : NULL);
	KUNIT_ASSERT_EQ(test, ib_post_send(c->a.qp, &inv[0], NULL), 0);
	kv_expect_wc(test, c->a.scq, 23, IB_WC_SUCCESS);

	/* Invalidated: the peer's WRITE through the old rkey must fail. */
	kv_write(test, &c->b, mr[1]->iova, mr[1]->rkey, 64, 0x33,
		 IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, c->a.buf[2 * PAGE_SIZE], 0);
	for (i = 0; i < 4; i++)
		ib_dereg_mr(mr[i]);
}

static void kv_send_with_inv_test(struct kunit *test)
{
	struct kv_ctx *c = test->priv;
	struct ib_mr *mr = kv_map_mr(test, c, &c->a, 8, 4);
	struct ib_reg_wr reg;
	struct ib_send_wr send;
	struct ib_sge sge;
	struct ib_wc wc = {};

	kv_reg_wr(&reg, mr, 30, NULL);
	reg.wr.send_flags = IB_SEND_SIGNALED;
	KUNIT_ASSERT_EQ(test, ib_post_send(c->a.qp, &reg.wr, NULL), 0);
	kv_expect_wc(test, c->a.scq, 30, IB_WC_SUCCESS);

	kv_post_recv(test, &c->a, 31);
	kv_send_wr(&send, &sge, &c->b, 32);
	send.opcode = IB_WR_SEND_WITH_INV;
	send.ex.invalidate_rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, ib_post_send(c->b.qp, &send, NULL), 0);
	kv_expect_wc(test, c->b.scq, 32, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, kv_poll(c->a.rcq, &wc), 0);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, mr->rkey);

	/* Free again: it registers anew, under the next key. */
	kv_reg_wr(&reg, mr, 33, NULL);
	reg.wr.send_flags = IB_SEND_SIGNALED;
	KUNIT_ASSERT_EQ(test, ib_post_send(c->a.qp, &reg.wr, NULL), 0);
	kv_expect_wc(test, c->a.scq, 33, IB_WC_SUCCESS);
	ib_dereg_mr(mr);
}

static void kv_read_many_sge_test(struct kunit *test)
{
	struct kv_ctx *c = test->priv;
	struct ib_mr *mr = kv_map_mr(test, c, &c->b, 0, KV_PAGES);
	struct ib_sge (*sge)[8] = kunit_kcalloc(test, 16, sizeof(*sge), GFP_KERNEL);
	struct ib_rdma_wr *rd = kunit_kcalloc(test, 16, sizeof(*rd), GFP_KERNEL);
	struct ib_reg_wr reg;
	u32 off, chunk = KV_BYTES / 16, i, j;

	KUNIT_ASSERT_NOT_NULL(test, sge);
	KUNIT_ASSERT_NOT_NULL(test, rd);

	for (i = 0; i < KV_BYTES; i++)
		c->b.buf[i] = (u8)(i * 7 + i / 251);
	kv_reg_wr(&reg, mr, 40, NULL);
	reg.wr.send_flags = IB_SEND_SIGNALED;
	KUNIT_ASSERT_EQ(test, ib_post_send(c->b.qp, &reg.wr, NULL), 0);
	kv_expect_wc(test, c->b.scq, 40, IB_WC_SUCCESS);

	/* 16 READs of 1/16 of the MR each, scattered into 8 uneven SGEs. */
	memset(c->a.buf, 0, KV_BYTES);
	for (i = 0; i < 16; i++) {
		off = 0;
		for (j = 0; j < 8; j++) {
			/* 520, 504, 520, ... and the rest: uneven, not 2^n */
			u32 len = j < 7 ? chunk / 8 + ((j & 1) ? -8 : 8) :
					  chunk - off;

			sge[i][j] = (struct ib_sge){
				.addr = c->a.dma + i * chunk + off,
				.length = len,
				.lkey = c->pd->local_dma_lkey,
			};
			off += len;
		}
		rd[i] = (struct ib_rdma_wr){
			.wr = { .opcode = IB_WR_RDMA_READ, .wr_id = 50 + i,
				.sg_list = sge[i], .num_sge = 8,
				.next = i < 15 ? &rd[i + 1].wr : NULL,
				.send_flags = i == 15 ? IB_SEND_SIGNALED : 0 },
			.remote_addr = mr->iova + i * chunk,
			.rkey = mr->rkey,
		};
	}
	KUNIT_ASSERT_EQ(test, ib_post_send(c->a.qp, &rd[0].wr, NULL), 0);
	kv_expect_wc(test, c->a.scq, 65, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(c->a.buf, c->b.buf, KV_BYTES), 0);
	ib_dereg_mr(mr);
}

/*
 * A kernel consumer's ATOMIC WRITE (8 bytes from its SGE) and FLUSH (of
 * global visibility, over a range as long as its SGE) into a fast-reg MR
 * that grants IB_ACCESS_FLUSH_GLOBAL: both complete, the 8 bytes land.
 */
static void kv_atomic_write_flush_test(struct kunit *test)
{
	static const u8 val[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
	struct kv_ctx *c = test->priv;
	struct ib_mr *mr;
	struct ib_sge sge[2];
	struct ib_rdma_wr wr[2];
	struct ib_reg_wr reg;

	if (!SROCE_KERNEL_PMEM_WR)
		kunit_skip(test, "no IB_WR_ATOMIC_WRITE, IB_WR_FLUSH before 6.2");
	mr = kv_map_mr(test, c, &c->b, 0, 2);
	kv_reg_wr(&reg, mr, 90, NULL);
	reg.access |= IB_ACCESS_FLUSH_GLOBAL;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	KUNIT_ASSERT_EQ(test, ib_post_send(c->b.qp, &reg.wr, NULL), 0);
	kv_expect_wc(test, c->b.scq, 90, IB_WC_SUCCESS);

	memset(c->b.buf, 0, 2 * PAGE_SIZE);
	memcpy(c->a.buf + 8, val, sizeof(val));
	sge[0] = (struct ib_sge){ .addr = c->a.dma + 8, .length = 8,
				  .lkey = c->pd->local_dma_lkey };
	sge[1] = (struct ib_sge){ .addr = c->a.dma, .length = PAGE_SIZE,
				  .lkey = c->pd->local_dma_lkey };
	wr[0] = (struct ib_rdma_wr){
		.wr = { .opcode = IB_WR_ATOMIC_WRITE, .wr_id = 91,
			.sg_list = &sge[0], .num_sge = 1, .next = &wr[1].wr,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = mr->iova + 64, .rkey = mr->rkey,
	};
	wr[1] = (struct ib_rdma_wr){
		.wr = { .opcode = IB_WR_FLUSH, .wr_id = 92,
			.sg_list = &sge[1], .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = mr->iova, .rkey = mr->rkey,
	};
	KUNIT_ASSERT_EQ(test, ib_post_send(c->a.qp, &wr[0].wr, NULL), 0);
	kv_expect_wc_op(test, c->a.scq, 91, IB_WC_SUCCESS, IB_WC_ATOMIC_WRITE);
	kv_expect_wc_op(test, c->a.scq, 92, IB_WC_SUCCESS, IB_WC_FLUSH);
	KUNIT_EXPECT_MEMEQ(test, c->b.buf + 64, val, sizeof(val));
	ib_dereg_mr(mr);
}

static void kv_nfs_rounds_test(struct kunit *test)
{
	struct kv_ctx *c = test->priv;
	struct ib_mr *mr[2] = {
		kv_map_mr(test, c, &c->a, 0, 2), kv_map_mr(test, c, &c->a, 2, 2),
	};
	struct ib_send_wr inv, send;
	struct ib_reg_wr reg;
	struct ib_sge sge;
	int round;

	for (round = 0; round < 32; round++) {
		struct ib_mr *cur = mr[round & 1], *old = mr[!(round & 1)];

		kv_post_recv(test, &c->b, 100 + round);
		kv_send_wr(&send, &sge, &c->a, 200 + round);
		kv_reg_wr(&reg, cur, 300 + round, &send);
		kv_inv_wr(&inv, old->rkey, 400 + round, false, &reg.wr);
		KUNIT_ASSERT_EQ(test, ib_post_send(c->a.qp, round ? &inv : &reg.wr,
						   NULL), 0);
		kv_expect_wc(test, c->a.scq, 200 + round, IB_WC_SUCCESS);
		kv_expect_wc(test, c->b.rcq, 100 + round, IB_WC_SUCCESS);
		kv_write(test, &c->b, cur->iova + 8, cur->rkey, 256,
			 (u8)round, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, c->a.buf[(round & 1) * 2 * PAGE_SIZE + 8],
				(u8)round);
	}
	ib_dereg_mr(mr[0]);
	ib_dereg_mr(mr[1]);
}

static int kv_suite_init(struct kunit_suite *suite)
{
	return ib_register_client(&kv_client);
}

static void kv_suite_exit(struct kunit_suite *suite)
{
	ib_unregister_client(&kv_client);
}

static struct kunit_case sroce_kverbs_cases[] = {
	KUNIT_CASE(kv_two_reg_mr_test),
	KUNIT_CASE(kv_local_inv_chain_test),
	KUNIT_CASE(kv_send_with_inv_test),
	KUNIT_CASE(kv_read_many_sge_test),
	KUNIT_CASE(kv_nfs_rounds_test),
	KUNIT_CASE(kv_atomic_write_flush_test),
	{}
};

static struct kunit_suite sroce_kverbs_suite = {
	.name = "sroce_kverbs",
	.init = kv_init,
	.exit = kv_exit,
	.suite_init = kv_suite_init,
	.suite_exit = kv_suite_exit,
	.test_cases = sroce_kverbs_cases,
};

kunit_test_suites(&sroce_kverbs_suite);
