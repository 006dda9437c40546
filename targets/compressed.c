/* compressed.c: cores stored compressed (systemd-coredump's .zst, .lz4 and .xz), known by their
 * first bytes, not by a file's name, and decompressed as a stream into an unlinked temporary
 * file: memory holds one input and one output buffer whatever the core's size, and the file
 * holds no block of zeros (a core is mostly zero pages: they become holes, as coredumpctl
 * leaves them). The file goes in $TMPDIR, else /var/tmp (which systemd keeps on disk; /tmp may
 * be memory), else /tmp. */
#define _GNU_SOURCE /* O_TMPFILE, mkostemp */
#include <elf.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "internal.h"

#define IN_BYTES (256u << 10)
#define OUT_BYTES (1u << 20)
#define BLOCK 4096u
#define XZ_MEMLIMIT (UINT64_C(1) << 30)

const char *jitmap_compression_of(const void *head, size_t len)
{
	static const struct {
		const char *name;
		uint8_t magic[6];
		size_t n;
	} kinds[] = {
		{"zstd", {0x28, 0xb5, 0x2f, 0xfd}, 4},
		{"lz4", {0x04, 0x22, 0x4d, 0x18}, 4},
		{"xz", {0xfd, '7', 'z', 'X', 'Z', 0x00}, 6},
	};
	for (size_t i = 0; head && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (len >= kinds[i].n && !memcmp(head, kinds[i].magic, kinds[i].n))
			return kinds[i].name;
	return NULL;
}

/* -- The output: a temporary file with holes -- */

struct out {
	int fd;
	uint64_t size;     /* bytes decompressed so far */
	const char *dir;
	const volatile sig_atomic_t *interrupt;
	jitmap_error *err;
};

static bool interrupted(const struct out *o)
{
	return o->interrupt && *o->interrupt;
}

static int temp_file(struct out *o)
{
	const char *dirs[] = {secure_getenv("TMPDIR"), "/var/tmp", "/tmp"};
	int last = ENOENT;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (!dirs[i] || !dirs[i][0])
			continue;
		o->dir = dirs[i];
		o->fd = open(dirs[i], O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (o->fd >= 0)
			return 0;
		/* O_TMPFILE unsupported by the file system: a named file, unlinked at once. */
		char path[4096];
		snprintf(path, sizeof(path), "%s/jitmap-core-XXXXXX", dirs[i]);
		o->fd = mkostemp(path, O_CLOEXEC);
		if (o->fd >= 0) {
			unlink(path);
			return 0;
		}
		last = errno;
	}
	return jitmap__fail(o->err, -last, 0, "no directory for the decompressed core "
			    "($TMPDIR, /var/tmp, /tmp): %s", strerror(last));
}

/* Write `n` bytes that follow what was written, all-zero pieces left as holes: pieces end on
 * the file's BLOCK boundaries, whatever sizes the decoder gives its output in (the file's
 * size is set at the end, so a zero piece at the end needs no write either). */
static int put(struct out *o, const uint8_t *p, size_t n)
{
	static const uint8_t zero[BLOCK];
	for (size_t at = 0; at < n;) {
		const size_t room = BLOCK - (size_t)(o->size % BLOCK);
		const size_t k = n - at < room ? n - at : room;
		if (memcmp(p + at, zero, k)) {
			for (size_t done = 0; done < k;) {
				const ssize_t w = pwrite(o->fd, p + at + done, k - done,
							 (off_t)(o->size + done));
				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0) {
					const int e = w < 0 ? errno : EIO;
					return jitmap__fail(o->err, -e, 0, "cannot write the decompressed "
							    "core in %s after %llu bytes: %s%s", o->dir,
							    (unsigned long long)o->size, strerror(e),
							    e == ENOSPC ? " (set TMPDIR to a directory "
							    "with room for it)" : "");
				}
				done += (size_t)w;
			}
		}
		o->size += k;
		at += k;
	}
	return 0;
}

/* -- The codecs: each turns the input stream into put() calls -- */

struct in {
	int fd;
	uint8_t *buf;
	size_t len, pos;   /* bytes in buf, bytes of them used */
	uint64_t offset;   /* of buf[0] in the compressed file */
};

/* Refill the input once it is used up: bytes read (0 at the end), or -errno. */
static ssize_t refill(struct in *in)
{
	in->offset += in->len;
	in->len = in->pos = 0;
	for (;;) {
		const ssize_t r = read(in->fd, in->buf, IN_BYTES);
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0)
			in->len = (size_t)r;
		return r < 0 ? -errno : r;
	}
}

static int read_fail(struct in *in, jitmap_error *err, ssize_t r)
{
	return jitmap__fail(err, (int)r, in->offset, "cannot read the compressed core: %s",
			    strerror((int)-r));
}

/* A decoder's one step: from in->buf + in->pos (moved past what it used) into `obuf` (at most
 * OUT_BYTES; *produced of them), *unfinished when the stream stops inside a frame there; 0,
 * or -EINVAL with `err` filled. */
typedef int step_fn(void *dec, struct in *in, uint8_t *obuf, size_t *produced,
		    bool *unfinished, jitmap_error *err);

/* The input through `step` into the file, each input buffer until it is used and the decoder
 * has nothing more to give for it: 0 (*cut: the stream ended inside a frame), or -errno. */
static int drive(struct in *in, struct out *o, uint8_t *obuf, void *dec, step_fn *step,
		 bool *cut)
{
	bool unfinished = false;
	int rc = 0;
	for (ssize_t r; !rc && (r = refill(in)) != 0;) {
		if (r < 0)
			return read_fail(in, o->err, r);
		for (bool more = true; !rc && (in->pos < in->len || more);) {
			if (interrupted(o))
				return jitmap__fail(o->err, -EINTR, in->offset + in->pos, "interrupted");
			size_t produced = 0;
			const size_t before = in->pos;
			bool u = unfinished;
			rc = step(dec, in, obuf, &produced, &u, o->err);
			/* A call that found nothing to do (the output filled the buffer exactly last
			 * time) says nothing of where the stream stands: a decoder's hint then asks
			 * for the next frame's header. */
			if (produced || in->pos != before)
				unfinished = u;
			if (!rc)
				rc = put(o, obuf, produced);
			more = produced == OUT_BYTES;
		}
	}
	*cut = !rc && unfinished;
	return rc;
}

static int zstd_step(void *dec, struct in *in, uint8_t *obuf, size_t *produced,
		     bool *unfinished, jitmap_error *err)
{
	ZSTD_inBuffer ib = {in->buf, in->len, in->pos};
	ZSTD_outBuffer ob = {obuf, OUT_BYTES, 0};
	const size_t r = ZSTD_decompressStream(dec, &ob, &ib);
	if (ZSTD_isError(r))
		return jitmap__fail(err, -EINVAL, in->offset + ib.pos,
				    "not a zstd stream jitmap can read: %s", ZSTD_getErrorName(r));
	in->pos = ib.pos;
	*produced = ob.pos;
	*unfinished = r != 0; /* 0: a frame is done and flushed */
	return 0;
}

static int lz4_step(void *dec, struct in *in, uint8_t *obuf, size_t *produced,
		    bool *unfinished, jitmap_error *err)
{
	size_t dst = OUT_BYTES, src = in->len - in->pos;
	const size_t r = LZ4F_decompress(dec, obuf, &dst, in->buf + in->pos, &src, NULL);
	if (LZ4F_isError(r))
		return jitmap__fail(err, -EINVAL, in->offset + in->pos,
				    "not an lz4 frame jitmap can read: %s", LZ4F_getErrorName(r));
	in->pos += src;
	*produced = dst;
	*unfinished = r != 0; /* 0: a frame is done */
	return 0;
}

/* Each returns 0 (with *cut set when the stream ended inside a frame), or -errno. */
static int zstd_stream(struct in *in, struct out *o, uint8_t *obuf, bool *cut)
{
	ZSTD_DStream *z = ZSTD_createDStream();
	if (!z)
		return jitmap__fail(o->err, -ENOMEM, 0, "out of memory");
	const int rc = drive(in, o, obuf, z, zstd_step, cut);
	ZSTD_freeDStream(z);
	return rc;
}

static int lz4_stream(struct in *in, struct out *o, uint8_t *obuf, bool *cut)
{
	LZ4F_dctx *d;
	if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)))
		return jitmap__fail(o->err, -ENOMEM, 0, "out of memory");
	const int rc = drive(in, o, obuf, d, lz4_step, cut);
	LZ4F_freeDecompressionContext(d);
	return rc;
}

static int xz_stream(struct in *in, struct out *o, uint8_t *obuf, bool *cut)
{
	lzma_stream s = LZMA_STREAM_INIT;
	/* The dictionary is the header's to say: a limit keeps a hostile one from sizing our
	 * memory (xz -9 needs 65 MiB). */
	if (lzma_stream_decoder(&s, XZ_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK)
		return jitmap__fail(o->err, -ENOMEM, 0, "out of memory");
	int rc = 0;
	lzma_ret ret = LZMA_OK;
	bool end = false;
	while (!rc && ret != LZMA_STREAM_END) {
		if (interrupted(o)) {
			rc = jitmap__fail(o->err, -EINTR, in->offset + (in->len - s.avail_in),
					  "interrupted");
			break;
		}
		if (s.avail_in == 0 && !end) {
			const ssize_t r = refill(in);
			if (r < 0) {
				rc = read_fail(in, o->err, r);
				break;
			}
			end = r == 0;
			s.next_in = in->buf;
			s.avail_in = in->len;
		}
		s.next_out = obuf;
		s.avail_out = OUT_BYTES;
		ret = lzma_code(&s, end ? LZMA_FINISH : LZMA_RUN);
		rc = put(o, obuf, OUT_BYTES - s.avail_out);
		if (rc || ret == LZMA_OK || ret == LZMA_STREAM_END)
			continue;
		if (ret == LZMA_BUF_ERROR && end)
			break; /* the input ended inside a stream */
		rc = jitmap__fail(o->err, -EINVAL, in->offset + (in->len - s.avail_in),
				  "not an xz stream jitmap can read: %s",
				  ret == LZMA_MEM_ERROR ? "out of memory"
				  : ret == LZMA_MEMLIMIT_ERROR ? "its dictionary needs more than 1 GiB"
				  : ret == LZMA_FORMAT_ERROR ? "not the xz format"
				  : ret == LZMA_OPTIONS_ERROR ? "options this liblzma does not support"
				  : "corrupt data");
	}
	lzma_end(&s);
	*cut = !rc && ret != LZMA_STREAM_END;
	return rc;
}

int jitmap__decompress(int fd, const char *codec, const volatile sig_atomic_t *interrupt,
		       uint64_t *size, char *cut_note, size_t cut_len, jitmap_error *err)
{
	struct out o = {.fd = -1, .interrupt = interrupt, .err = err};
	struct in in = {.fd = fd};
	if (cut_len)
		cut_note[0] = 0;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return jitmap__fail(err, -errno, 0, "cannot read the compressed core: %s",
				    strerror(errno));
	in.buf = malloc(IN_BYTES);
	uint8_t *obuf = malloc(OUT_BYTES);
	int rc = in.buf && obuf ? temp_file(&o) : jitmap__fail(err, -ENOMEM, 0, "out of memory");
	bool cut = false;
	if (!rc)
		rc = !strcmp(codec, "zstd") ? zstd_stream(&in, &o, obuf, &cut)
		   : !strcmp(codec, "lz4") ? lz4_stream(&in, &o, obuf, &cut)
		   : xz_stream(&in, &o, obuf, &cut);
	if (!rc && ftruncate(o.fd, (off_t)o.size))
		rc = jitmap__fail(err, -errno, 0, "cannot size the decompressed core in %s: %s",
				  o.dir, strerror(errno));
	/* A stream cut before an ELF header came out (inside its frame header, or its first
	 * block): no core to read as far as it came, and "not an ELF file" would hide why. The
	 * sentence says where (no offset: the offset is the core's, of which there is none). */
	if (!rc && cut && o.size < sizeof(Elf64_Ehdr)) {
		const unsigned long long in_bytes = in.offset + in.len;
		if (o.size)
			rc = jitmap__fail(err, -EINVAL, 0, "the %s stream ends after %llu byte%s, "
					  "when %llu byte%s of the core had come out, too few for its "
					  "ELF header (a truncated file?)", codec, in_bytes,
					  in_bytes == 1 ? "" : "s", (unsigned long long)o.size,
					  o.size == 1 ? "" : "s");
		else
			rc = jitmap__fail(err, -EINVAL, 0, "the %s stream ends after %llu byte%s, "
					  "before the first byte of the core (a truncated file?)",
					  codec, in_bytes, in_bytes == 1 ? "" : "s");
	}
	free(in.buf);
	free(obuf);
	if (rc) {
		if (o.fd >= 0)
			close(o.fd);
		return rc;
	}
	if (cut && cut_len)
		snprintf(cut_note, cut_len, "the %s stream ends inside a frame, after %llu bytes of "
			 "the core: the core is read as far as it came out (a truncated file?)",
			 codec, (unsigned long long)o.size);
	*size = o.size;
	return o.fd;
}
