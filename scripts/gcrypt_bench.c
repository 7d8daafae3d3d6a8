/*
 * gcrypt_bench: the rows of `clustercrypt bench`, measured with libgcrypt the
 * way clustercrypt (and `cryptsetup benchmark`) measures them, so that
 * scripts/compare.py can put the two side by side.
 *
 * Build:  cc -O2 scripts/gcrypt_bench.c -lgcrypt -o gcrypt_bench
 *
 * Usage:  gcrypt_bench [-t SECONDS] [-b BUFFER] [-r REQUEST] all | ROW...
 *         gcrypt_bench --list
 *
 * ROW is LABEL:KEY_BITS with clustercrypt's labels and key sizes (XTS counts
 * both keys): aes-xts:512, serpent-cbc:128, des3_ede-cbc:192, rc4:128,
 * chacha20:256, aes-gcm:256, chacha20-poly1305:256.
 *
 * Method, per row: a BUFFER-byte buffer (default 1 MiB) is processed in
 * REQUEST-byte requests (default 64 KiB), request i with the IV of sector i
 * (plain64: i as 64-bit little-endian, zero padded; gcry_cipher_setiv per
 * request, gcry_cipher_setctr for CTR, a 12-byte nonce for ChaCha20 and the
 * AEADs). Whole passes are repeated until at least SECONDS (default 1) of
 * encryption have passed, then the same for decryption. MiB/s is
 * bytes / 2^20 / wall-clock seconds (CLOCK_MONOTONIC). RC4 has no IV and runs
 * one continuous key stream, as clustercrypt's RC4 row does. The AEAD rows
 * call gcry_cipher_gettag after every encrypted request and
 * gcry_cipher_checktag after every decrypted request; every tag must verify.
 *
 * --passes N (or ENC,DEC) runs exactly that many passes per direction instead
 * of timing: a fixed amount of work whose instructions scripts/arm_count.py
 * counts under QEMU.
 *
 * Output: one line per row, "LABEL KEY_BITS ENC_MIB_S DEC_MIB_S", after
 * comment lines starting with '#'. --list prints "LABEL KEY_BITS" lines.
 */
#define _POSIX_C_SOURCE 200809L
#include <gcrypt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ROWS 128
#define TAG_LEN 16

enum kind { BLOCK, STREAM, AEAD };

struct row {
    char label[40];
    int key_bits; /* as clustercrypt counts them (XTS: both keys) */
    int algo;
    int mode;
    enum kind kind;
};

static struct row rows[MAX_ROWS];
/* --passes: exact passes of encryption and of decryption (-1: use the clock). */
static long exact_passes[2] = {-1, -1};
static int nrows;

static void die(const char *what, gcry_error_t err)
{
    if (err)
        fprintf(stderr, "gcrypt_bench: %s: %s\n", what, gcry_strerror(err));
    else
        fprintf(stderr, "gcrypt_bench: %s\n", what);
    exit(2);
}

static void add(const char *label, int key_bits, int algo, int mode, enum kind kind)
{
    struct row *r;

    if (nrows == MAX_ROWS)
        die("row table full", 0);
    r = &rows[nrows++];
    snprintf(r->label, sizeof r->label, "%s", label);
    r->key_bits = key_bits;
    r->algo = algo;
    r->mode = mode;
    r->kind = kind;
}

/* Every row libgcrypt can measure, in clustercrypt's table order. */
static void build_table(void)
{
    static const struct {
        const char *name;
        int bits;
        int algo;
        int block; /* bytes */
    } ciphers[] = {
        {"aes", 128, GCRY_CIPHER_AES128, 16},
        {"aes", 192, GCRY_CIPHER_AES192, 16},
        {"aes", 256, GCRY_CIPHER_AES256, 16},
        {"serpent", 128, GCRY_CIPHER_SERPENT128, 16},
        {"serpent", 192, GCRY_CIPHER_SERPENT192, 16},
        {"serpent", 256, GCRY_CIPHER_SERPENT256, 16},
        /* libgcrypt has no 192-bit Twofish. */
        {"twofish", 128, GCRY_CIPHER_TWOFISH128, 16},
        {"twofish", 256, GCRY_CIPHER_TWOFISH, 16},
        {"camellia", 128, GCRY_CIPHER_CAMELLIA128, 16},
        {"camellia", 192, GCRY_CIPHER_CAMELLIA192, 16},
        {"camellia", 256, GCRY_CIPHER_CAMELLIA256, 16},
        {"blowfish", 128, GCRY_CIPHER_BLOWFISH, 8},
        {"des", 64, GCRY_CIPHER_DES, 8},
        {"des3_ede", 192, GCRY_CIPHER_3DES, 8},
        {"rc2", 128, GCRY_CIPHER_RFC2268_128, 8},
    };
    static const struct {
        const char *name;
        int mode;
    } modes[] = {
        {"ecb", GCRY_CIPHER_MODE_ECB},
        {"cbc", GCRY_CIPHER_MODE_CBC},
        {"ctr", GCRY_CIPHER_MODE_CTR},
        {"xts", GCRY_CIPHER_MODE_XTS},
    };
    char label[40];
    size_t c, m;

    for (c = 0; c < sizeof ciphers / sizeof ciphers[0]; c++) {
        for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            int bits = ciphers[c].bits;
            if (modes[m].mode == GCRY_CIPHER_MODE_XTS) {
                if (ciphers[c].block != 16)
                    continue;
                bits *= 2;
            }
            snprintf(label, sizeof label, "%s-%s", ciphers[c].name, modes[m].name);
            add(label, bits, ciphers[c].algo, modes[m].mode, BLOCK);
        }
    }
    add("rc4", 128, GCRY_CIPHER_ARCFOUR, GCRY_CIPHER_MODE_STREAM, STREAM);
    add("rc4", 256, GCRY_CIPHER_ARCFOUR, GCRY_CIPHER_MODE_STREAM, STREAM);
    add("chacha20", 256, GCRY_CIPHER_CHACHA20, GCRY_CIPHER_MODE_STREAM, STREAM);
    add("aes-gcm", 128, GCRY_CIPHER_AES128, GCRY_CIPHER_MODE_GCM, AEAD);
    add("aes-gcm", 192, GCRY_CIPHER_AES192, GCRY_CIPHER_MODE_GCM, AEAD);
    add("aes-gcm", 256, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_GCM, AEAD);
    add("chacha20-poly1305", 256, GCRY_CIPHER_CHACHA20, GCRY_CIPHER_MODE_POLY1305, AEAD);
}

static const struct row *find_row(const char *text)
{
    char label[64];
    const char *colon = strrchr(text, ':');
    long bits;
    char *end;
    int i;

    if (!colon || (size_t)(colon - text) >= sizeof label)
        return NULL;
    memcpy(label, text, (size_t)(colon - text));
    label[colon - text] = '\0';
    bits = strtol(colon + 1, &end, 10);
    if (*end || end == colon + 1)
        return NULL;
    for (i = 0; i < nrows; i++)
        if (!strcmp(rows[i].label, label) && rows[i].key_bits == bits)
            return &rows[i];
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A keyed cipher handle for one row plus what its requests need. */
struct bench {
    const struct row *row;
    gcry_cipher_hd_t h;
    size_t block;   /* cipher block length (1 for stream ciphers) */
    size_t request; /* bytes per request */
    size_t nreq;    /* requests per pass */
    /* AEAD decryption: per request, the tag of the state the request is in
     * now and the tag of the other state (see prepare_aead_decrypt). */
    unsigned char (*tags)[2][TAG_LEN];
};

/* The IV (or nonce, or counter block) of `sector`: plain64. */
static void set_iv(struct bench *b, uint64_t sector)
{
    unsigned char iv[16];
    gcry_error_t err = 0;
    int i;

    memset(iv, 0, sizeof iv);
    for (i = 0; i < 8; i++)
        iv[i] = (unsigned char)(sector >> (8 * i));
    switch (b->row->mode) {
    case GCRY_CIPHER_MODE_ECB:
        return;
    case GCRY_CIPHER_MODE_CBC:
    case GCRY_CIPHER_MODE_XTS:
        err = gcry_cipher_setiv(b->h, iv, b->block);
        break;
    case GCRY_CIPHER_MODE_CTR:
        err = gcry_cipher_setctr(b->h, iv, b->block);
        break;
    case GCRY_CIPHER_MODE_STREAM:
        if (b->row->algo == GCRY_CIPHER_ARCFOUR)
            return; /* no IV: one continuous key stream */
        err = gcry_cipher_setiv(b->h, iv, 12);
        break;
    case GCRY_CIPHER_MODE_GCM:
    case GCRY_CIPHER_MODE_POLY1305:
        err = gcry_cipher_setiv(b->h, iv, 12);
        break;
    default:
        die("unknown mode", 0);
    }
    if (err)
        die("setiv", err);
}

static void open_row(struct bench *b, const struct row *row, size_t buffer, size_t request)
{
    unsigned char key[64];
    size_t key_len = (size_t)row->key_bits / 8, i;
    gcry_error_t err;

    memset(b, 0, sizeof *b);
    b->row = row;
    err = gcry_cipher_open(&b->h, row->algo, row->mode, 0);
    if (err)
        die(row->label, err);
    b->block = row->kind == BLOCK ? gcry_cipher_get_algo_blklen(row->algo) : 1;
    if (request % b->block || buffer % request)
        die("the buffer must be whole requests and a request whole blocks", 0);
    /* A fixed key with no weak DES subkeys and distinct XTS halves. */
    for (i = 0; i < key_len; i++)
        key[i] = (unsigned char)(i * 73 + 41);
    err = gcry_cipher_setkey(b->h, key, key_len);
    if (err)
        die("setkey", err);
    b->request = request;
    b->nreq = buffer / request;
    if (row->kind == AEAD) {
        b->tags = calloc(b->nreq, sizeof *b->tags);
        if (!b->tags)
            die("out of memory", 0);
    }
}

static void close_row(struct bench *b)
{
    gcry_cipher_close(b->h);
    free(b->tags);
}

static void one_request(struct bench *b, unsigned char *p, size_t i, int encrypt)
{
    gcry_error_t err;

    set_iv(b, i);
    if (b->row->kind == AEAD)
        gcry_cipher_final(b->h);
    if (encrypt)
        err = gcry_cipher_encrypt(b->h, p, b->request, NULL, 0);
    else
        err = gcry_cipher_decrypt(b->h, p, b->request, NULL, 0);
    if (err)
        die(encrypt ? "encrypt" : "decrypt", err);
    if (b->row->kind != AEAD)
        return;
    if (encrypt) {
        unsigned char tag[TAG_LEN];
        err = gcry_cipher_gettag(b->h, tag, TAG_LEN);
        if (err)
            die("gettag", err);
    } else {
        unsigned char swap[TAG_LEN];
        err = gcry_cipher_checktag(b->h, b->tags[i][0], TAG_LEN);
        if (err)
            die("checktag (a decryption did not verify)", err);
        memcpy(swap, b->tags[i][0], TAG_LEN);
        memcpy(b->tags[i][0], b->tags[i][1], TAG_LEN);
        memcpy(b->tags[i][1], swap, TAG_LEN);
    }
}

static void pass(struct bench *b, unsigned char *buf, int encrypt)
{
    size_t i;

    for (i = 0; i < b->nreq; i++)
        one_request(b, buf + i * b->request, i, encrypt);
}

/*
 * The benchmark decrypts the same buffer over and over, and every decryption
 * must verify a real tag. Both AEADs XOR a key stream and authenticate the
 * ciphertext, so a request in state A decrypts (with the tag of A) to state B,
 * which decrypts (with the tag of B) back to A. Encrypting each request twice
 * leaves it in its state and yields both tags.
 */
static void prepare_aead_decrypt(struct bench *b, unsigned char *buf)
{
    size_t i;
    gcry_error_t err;

    for (i = 0; i < b->nreq; i++) {
        unsigned char *p = buf + i * b->request;
        int k;
        for (k = 1; k >= 0; k--) {
            set_iv(b, i);
            gcry_cipher_final(b->h);
            err = gcry_cipher_encrypt(b->h, p, b->request, NULL, 0);
            if (err)
                die("encrypt", err);
            /* First round: tag of the other state; second: of this one. */
            err = gcry_cipher_gettag(b->h, b->tags[i][k], TAG_LEN);
            if (err)
                die("gettag", err);
        }
    }
}

/* Repeats passes until at least `min_time` seconds; returns MiB/s. */
static double measure(struct bench *b, unsigned char *buf, size_t buffer, double min_time,
                      int encrypt)
{
    double start = now(), elapsed;
    uint64_t bytes = 0;
    long n;

    if (exact_passes[!encrypt] >= 0) {
        for (n = 0; n < exact_passes[!encrypt]; n++)
            pass(b, buf, encrypt);
        elapsed = now() - start;
        return elapsed > 0 ? (double)buffer * n / 1048576.0 / elapsed : 0;
    }
    for (;;) {
        pass(b, buf, encrypt);
        bytes += buffer;
        elapsed = now() - start;
        if (elapsed >= min_time)
            break;
    }
    return (double)bytes / 1048576.0 / elapsed;
}

/* One encrypt and one decrypt pass must give the data back (and, for the
 * AEADs, every tag must verify). */
static void self_check(const struct row *row, size_t buffer, size_t request)
{
    struct bench b;
    unsigned char *data = malloc(buffer), *copy = malloc(buffer);
    size_t i;

    if (!data || !copy)
        die("out of memory", 0);
    for (i = 0; i < buffer; i++)
        data[i] = copy[i] = (unsigned char)(i * 131 + 7);
    open_row(&b, row, buffer, request);
    if (row->kind == AEAD) {
        /* Seal once, keeping each tag as the one decryption must check. */
        for (i = 0; i < b.nreq; i++) {
            set_iv(&b, i);
            gcry_cipher_final(b.h);
            if (gcry_cipher_encrypt(b.h, data + i * request, request, NULL, 0) ||
                gcry_cipher_gettag(b.h, b.tags[i][0], TAG_LEN))
                die("self-check: encryption failed", 0);
        }
    } else {
        pass(&b, data, 1);
    }
    if (!memcmp(data, copy, buffer))
        die("self-check: encryption left the data unchanged", 0);
    if (row->algo == GCRY_CIPHER_ARCFOUR) {
        /* No IV: decryption needs the key stream from its start. */
        close_row(&b);
        open_row(&b, row, buffer, request);
    }
    pass(&b, data, 0); /* checks the AEAD tags */
    close_row(&b);
    if (memcmp(data, copy, buffer)) {
        fprintf(stderr, "gcrypt_bench: self-check failed for %s:%d\n", row->label,
                row->key_bits);
        exit(2);
    }
    free(data);
    free(copy);
}

static void run_row(const struct row *row, size_t buffer, size_t request, double min_time)
{
    struct bench b;
    unsigned char *buf;
    double enc, dec;
    size_t i;

    self_check(row, buffer, request);
    if (posix_memalign((void **)&buf, 64, buffer))
        die("out of memory", 0);
    for (i = 0; i < buffer; i++)
        buf[i] = (unsigned char)(i * 131 + 7);
    open_row(&b, row, buffer, request);
    enc = measure(&b, buf, buffer, min_time, 1);
    if (row->kind == AEAD)
        prepare_aead_decrypt(&b, buf);
    dec = measure(&b, buf, buffer, min_time, 0);
    close_row(&b);
    free(buf);
    printf("%s %d %.2f %.2f\n", row->label, row->key_bits, enc, dec);
    fflush(stdout);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gcrypt_bench [-t SECONDS] [-b BUFFER_BYTES] [-r REQUEST_BYTES]\n"
            "                    [--passes N|ENC,DEC] [--disable-hwf NAME,NAME] all | "
            "LABEL:KEY_BITS...\n"
            "       gcrypt_bench --list\n"
            "Measures clustercrypt's rows with libgcrypt (1 MiB buffer, 64 KiB requests,\n"
            "an IV per request, >= SECONDS of encryption then of decryption) and prints\n"
            "\"LABEL KEY_BITS ENC_MIB_S DEC_MIB_S\" per row. Example: gcrypt_bench -t 1 "
            "aes-xts:512 chacha20:256\n");
}

int main(int argc, char **argv)
{
    double min_time = 1.0;
    size_t buffer = 1 << 20, request = 64 << 10;
    const struct row *todo[MAX_ROWS];
    int ntodo = 0, list = 0, all = 0, i;
    const char *hide = NULL;

    build_table();
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "-t") || !strcmp(a, "--time")) && i + 1 < argc) {
            char *end;
            min_time = strtod(argv[++i], &end);
            if (*end || min_time <= 0)
                die("-t needs a positive number of seconds", 0);
        } else if ((!strcmp(a, "-b") || !strcmp(a, "--buffer")) && i + 1 < argc) {
            buffer = strtoul(argv[++i], NULL, 10);
        } else if ((!strcmp(a, "-r") || !strcmp(a, "--request")) && i + 1 < argc) {
            request = strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--passes") && i + 1 < argc) {
            char *end;
            exact_passes[0] = exact_passes[1] = strtol(argv[++i], &end, 10);
            if (*end == ',')
                exact_passes[1] = strtol(end + 1, &end, 10);
            if (*end || exact_passes[0] < 0 || exact_passes[1] < 0)
                die("--passes needs N or ENC,DEC (non-negative)", 0);
        } else if (!strcmp(a, "--disable-hwf") && i + 1 < argc) {
            hide = argv[++i];
        } else if (!strcmp(a, "--list")) {
            list = 1;
        } else if (!strcmp(a, "all")) {
            all = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else {
            const struct row *r = find_row(a);
            if (!r) {
                fprintf(stderr, "gcrypt_bench: libgcrypt has no row '%s'\n", a);
                usage(stderr);
                return 2;
            }
            if (ntodo == MAX_ROWS)
                die("too many rows", 0);
            todo[ntodo++] = r;
        }
    }
    if (list) {
        for (i = 0; i < nrows; i++)
            printf("%s %d\n", rows[i].label, rows[i].key_bits);
        return 0;
    }
    if (all)
        for (ntodo = 0; ntodo < nrows; ntodo++)
            todo[ntodo] = &rows[ntodo];
    if (!ntodo) {
        usage(stderr);
        return 2;
    }
    if (!buffer || !request || request > buffer)
        die("bad buffer or request size", 0);

    /* CPU tiers: hide hardware features before gcry_check_version,
       as gcry_control(GCRYCTL_DISABLE_HWF) requires; names as in "hwflist". */
    if (hide) {
        char *names = strdup(hide), *save = NULL, *name;
        if (!names)
            die("out of memory", 0);
        for (name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save))
            if (gcry_control(GCRYCTL_DISABLE_HWF, name, NULL))
                fprintf(stderr, "gcrypt_bench: libgcrypt does not know hwf '%s' (ignored)\n", name);
        free(names);
    }
    if (!gcry_check_version(GCRYPT_VERSION))
        die("libgcrypt version mismatch", 0);
    gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    {
        char *hw = gcry_get_config(0, "hwflist");
        size_t k;
        if (hw)
            for (k = 0; hw[k]; k++)
                if (hw[k] == '\n' || hw[k] == ':')
                    hw[k] = ' ';
        printf("# libgcrypt %s; buffer %zu, request %zu, min time %.3f s; %s\n",
               gcry_check_version(NULL), buffer, request, min_time, hw ? hw : "");
        gcry_free(hw);
    }
    printf("# label key_bits encrypt_mib_s decrypt_mib_s\n");
    fflush(stdout);
    for (i = 0; i < ntodo; i++)
        run_row(todo[i], buffer, request, min_time);
    return 0;
}
