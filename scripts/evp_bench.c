/*
 * evp_bench: one OpenSSL EVP cipher measured the way `clustercrypt bench` and
 * scripts/gcrypt_bench.c measure, for scripts/compare.py (timed) and for the
 * instruction counts of scripts/arm_count.py (a fixed amount of work;
 * `openssl speed` runs for a time and uses 1 MiB requests).
 *
 * Build:  cc -O2 scripts/evp_bench.c -lcrypto -o evp_bench
 * Usage:  evp_bench [-b BUFFER] [-r REQUEST] [-t SECONDS | --passes N|ENC,DEC] EVP_NAME
 *
 * A BUFFER-byte buffer (default 1 MiB) in REQUEST-byte requests (default
 * 64 KiB), request i with the IV of sector i (i little-endian, zero padded)
 * set by EVP_CipherInit_ex on the open context (the key schedule is done
 * once per direction: each direction has its own context, keyed for it,
 * since a context keyed for encryption and switched to decryption with
 * EVP_CipherInit_ex(..., NULL key, ..., 0) keeps its encryption key schedule
 * and, for ECB and XTS, its encryption routine: it would time the wrong
 * direction, or decrypt CBC with the wrong key schedule). RC4 has no IV and
 * runs one continuous key stream per direction. The legacy provider is loaded when present
 * (Blowfish, DES, RC2, RC4). Before measuring, one request is encrypted and
 * decrypted on fresh contexts and must come back (exit 2 otherwise).
 *
 * -t SECONDS (default 1): whole passes of encryption are repeated until at
 * least SECONDS have passed, then the same for decryption; prints
 * "EVP_NAME ENC_MIB_S DEC_MIB_S" (MiB = 2^20 bytes, CLOCK_MONOTONIC). The
 * AEADs (GCM, ChaCha20-Poly1305) finish every request with a 16-byte tag, and
 * every decryption must verify its tag (see prepare_aead_decrypt).
 *
 * --passes N (or ENC,DEC): exactly ENC passes of encryption, then DEC of
 * decryption, untimed; prints "EVP_NAME ENC_BYTES DEC_BYTES". The AEADs'
 * decryptions check a tag that was never made for the data: failing checks
 * cost the instructions of passing ones, so they are not errors here.
 *
 * CPU masks come from the environment (OPENSSL_armcap, OPENSSL_ia32cap).
 */
#define _POSIX_C_SOURCE 200809L
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_LEN 16
#define USAGE "usage: evp_bench [-b BUFFER] [-r REQUEST] [-t SECONDS | --passes N|ENC,DEC] EVP_NAME\n"

static void die(const char *what)
{
    fprintf(stderr, "evp_bench: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(2);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct bench {
    /* ctx[1] encrypts, ctx[0] decrypts: each keyed for its direction. */
    EVP_CIPHER_CTX *ctx[2];
    size_t request, nreq;
    int aead, ivlen;
    int verify; /* decryptions must verify their tags (timed runs) */
    /* Per request: the tags of its two states (see prepare_aead_decrypt),
     * and which state it is in. */
    unsigned char (*tags)[2][TAG_LEN];
    unsigned char *state;
};

/* One request in place: set the IV (the context keeps its key schedule),
 * process, and for the AEADs make or check the tag. */
static void one_request(struct bench *b, unsigned char *chunk, size_t i, int enc,
                        unsigned char *tag_out)
{
    unsigned char iv[16], scratch[TAG_LEN];
    int outl;
    EVP_CIPHER_CTX *ctx = b->ctx[enc != 0];

    memset(iv, 0, sizeof iv);
    memcpy(iv, &i, sizeof i < (size_t)b->ivlen ? sizeof i : (size_t)b->ivlen);
    if (!EVP_CipherInit_ex(ctx, NULL, NULL, NULL, b->ivlen ? iv : NULL, enc))
        die("cannot set the IV");
    if (b->aead && !enc &&
        !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG_LEN,
                             b->tags[i][b->state[i]]))
        die("cannot set the tag");
    if (!EVP_CipherUpdate(ctx, chunk, &outl, chunk, (int)b->request) ||
        (size_t)outl != b->request)
        die("cipher update failed");
    if (!b->aead)
        return;
    if (EVP_CipherFinal_ex(ctx, scratch, &outl) != 1) {
        if (enc || b->verify)
            die(enc ? "cannot finish a sealing" : "a decryption did not verify its tag");
        ERR_clear_error();
    }
    if (enc && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAG_LEN,
                                    tag_out ? tag_out : scratch))
        die("cannot get the tag");
    if (!enc)
        b->state[i] ^= 1;
}

static void pass(struct bench *b, unsigned char *buf, int enc)
{
    size_t i;

    for (i = 0; i < b->nreq; i++)
        one_request(b, buf + i * b->request, i, enc, NULL);
}

/*
 * Timed decryption runs over the same buffer again and again, and every
 * decryption must verify a real tag. Both AEADs XOR a key stream and
 * authenticate the ciphertext: a request in state A decrypts (with A's tag)
 * to state B, which decrypts (with B's tag) back to A. Sealing each request
 * twice leaves it in its state and yields both tags.
 */
static void prepare_aead_decrypt(struct bench *b, unsigned char *buf)
{
    size_t i;
    int k;

    for (i = 0; i < b->nreq; i++) {
        for (k = 1; k >= 0; k--)
            one_request(b, buf + i * b->request, i, 1, b->tags[i][k]);
        b->state[i] = 0;
    }
}

/* A context keyed for one direction (enc = 1 encrypts), without padding. */
static EVP_CIPHER_CTX *keyed(const EVP_CIPHER *cipher, const unsigned char *key, int enc)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

    if (!ctx || !EVP_CipherInit_ex(ctx, cipher, NULL, key, NULL, enc))
        die("cannot set the key");
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    return ctx;
}

/* Request 0 encrypted, then decrypted (its tag checked), on fresh contexts:
 * it must come back, or what is measured is not this cipher. */
static void round_trip(struct bench *b, const EVP_CIPHER *cipher,
                       const unsigned char *key, const unsigned char *buf)
{
    struct bench t = *b;
    unsigned char *copy = malloc(b->request);
    unsigned char tags[1][2][TAG_LEN], state = 0;
    int k;

    if (!copy)
        die("out of memory");
    memcpy(copy, buf, b->request);
    for (k = 1; k >= 0; k--)
        t.ctx[k] = keyed(cipher, key, k);
    t.tags = tags;
    t.state = &state;
    t.verify = 1;
    one_request(&t, copy, 0, 1, tags[0][0]);
    if (!memcmp(copy, buf, b->request))
        die("encryption left the data as it was");
    one_request(&t, copy, 0, 0, NULL);
    if (memcmp(copy, buf, b->request))
        die("decryption did not give back the plaintext");
    for (k = 0; k < 2; k++)
        EVP_CIPHER_CTX_free(t.ctx[k]);
    free(copy);
}

int main(int argc, char **argv)
{
    size_t buffer = 1 << 20, i;
    long passes[2] = {-1, -1}, p;
    double seconds = 1.0, mib[2];
    const char *name = NULL;
    EVP_CIPHER *fetched;
    const EVP_CIPHER *cipher;
    struct bench b;
    unsigned char key[64], *buf;
    int k;

    memset(&b, 0, sizeof b);
    b.request = 64 << 10;
    for (k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "-b") && k + 1 < argc) {
            buffer = strtoul(argv[++k], NULL, 10);
        } else if (!strcmp(argv[k], "-r") && k + 1 < argc) {
            b.request = strtoul(argv[++k], NULL, 10);
        } else if (!strcmp(argv[k], "-t") && k + 1 < argc) {
            char *end;
            seconds = strtod(argv[++k], &end);
            if (*end || !(seconds > 0))
                die("-t needs a positive number of seconds");
        } else if (!strcmp(argv[k], "--passes") && k + 1 < argc) {
            char *end;
            passes[0] = passes[1] = strtol(argv[++k], &end, 10);
            if (*end == ',')
                passes[1] = strtol(end + 1, &end, 10);
            if (*end || passes[0] < 0 || passes[1] < 0)
                die("--passes needs N or ENC,DEC (non-negative)");
        } else if (argv[k][0] != '-' && !name) {
            name = argv[k];
        } else {
            fputs(USAGE, stderr);
            return 2;
        }
    }
    if (!name) {
        fputs(USAGE, stderr);
        return 2;
    }
    if (!buffer || !b.request || b.request > buffer || buffer % b.request ||
        b.request > 1 << 30)
        die("the buffer must be a positive multiple of the request size");
    /* Legacy ciphers live in the legacy provider, a module that may be
     * missing (an unpacked cross library for scripts/arm_count.py): try it.
     * Any explicit load, even a failed one, ends the implicit loading of the
     * default provider, so load that one first, explicitly. */
    if (!OSSL_PROVIDER_load(NULL, "default"))
        die("cannot load the default provider");
    OSSL_PROVIDER_load(NULL, "legacy");
    ERR_clear_error();
    fetched = EVP_CIPHER_fetch(NULL, name, NULL);
    cipher = fetched ? fetched : EVP_get_cipherbyname(name);
    if (!cipher)
        die("unknown cipher");
    b.aead = (EVP_CIPHER_get_flags(cipher) & EVP_CIPH_FLAG_AEAD_CIPHER) != 0;
    b.verify = passes[0] < 0;
    if (EVP_CIPHER_get_key_length(cipher) > (int)sizeof key)
        die("key too long");
    b.ivlen = EVP_CIPHER_get_iv_length(cipher);
    if (b.ivlen > 16)
        die("IV too long");
    for (i = 0; i < sizeof key; i++)
        key[i] = (unsigned char)(i * 37 + 11);
    buf = malloc(buffer);
    b.nreq = buffer / b.request;
    b.tags = calloc(b.nreq, sizeof *b.tags);
    b.state = calloc(b.nreq, 1);
    if (!buf || !b.tags || !b.state)
        die("out of memory");
    for (i = 0; i < buffer; i++)
        buf[i] = (unsigned char)(i * 131 + 7);
    round_trip(&b, cipher, key, buf);
    for (k = 0; k < 2; k++)
        b.ctx[k] = keyed(cipher, key, k);

    if (passes[0] >= 0) {
        for (k = 0; k < 2; k++)
            for (p = 0; p < passes[k]; p++)
                pass(&b, buf, k == 0);
        printf("%s %zu %zu\n", name, buffer * (size_t)passes[0], buffer * (size_t)passes[1]);
    } else {
        for (k = 0; k < 2; k++) {
            int enc = k == 0;
            double start, elapsed;
            unsigned long long bytes = 0;
            if (!enc && b.aead)
                prepare_aead_decrypt(&b, buf);
            pass(&b, buf, enc); /* warm-up, untimed */
            start = now();
            do {
                pass(&b, buf, enc);
                bytes += buffer;
                elapsed = now() - start;
            } while (elapsed < seconds);
            mib[k] = (double)bytes / 1048576.0 / elapsed;
        }
        printf("%s %.2f %.2f\n", name, mib[0], mib[1]);
    }
    for (k = 0; k < 2; k++)
        EVP_CIPHER_CTX_free(b.ctx[k]);
    EVP_CIPHER_free(fetched);
    free(b.tags);
    free(b.state);
    free(buf);
    return 0;
}
