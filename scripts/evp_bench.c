/*
 * evp_bench: one OpenSSL EVP cipher processing a fixed amount of data the way
 * `clustercrypt bench` and scripts/gcrypt_bench.c do, for the instruction
 * counts of scripts/arm_count.py (`openssl speed` runs for a time, so its
 * instruction count is not fixed).
 *
 * Build:  cc -O2 scripts/evp_bench.c -lcrypto -o evp_bench
 * Usage:  evp_bench [-b BUFFER] [-r REQUEST] [--passes N|ENC,DEC] EVP_NAME
 *
 * A BUFFER-byte buffer (default 1 MiB) in REQUEST-byte requests (default
 * 64 KiB), request i with the IV of sector i (i little-endian, zero padded)
 * set by EVP_CipherInit_ex on the open context (the key schedule is done once);
 * exactly ENC passes of encryption, then DEC passes of decryption. The AEADs
 * (GCM, ChaCha20-Poly1305) finish every request and produce or check a 16-byte
 * tag; a decryption's tag check fails (the data was never sealed with it) but
 * costs the same instructions as a passing one, so failures are not errors.
 * CPU masks come from the environment (OPENSSL_armcap, OPENSSL_ia32cap).
 * Prints "EVP_NAME ENC_BYTES DEC_BYTES".
 */
#include <openssl/err.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_LEN 16

static void die(const char *what)
{
    fprintf(stderr, "evp_bench: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    size_t buffer = 1 << 20, request = 64 << 10, i, nreq;
    long passes[2] = {1, 1}, p;
    const char *name = NULL;
    const EVP_CIPHER *cipher;
    EVP_CIPHER_CTX *ctx;
    unsigned char key[64], iv[16], tag[TAG_LEN], *buf;
    int aead, k, outl, ivlen;

    for (k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "-b") && k + 1 < argc) {
            buffer = strtoul(argv[++k], NULL, 10);
        } else if (!strcmp(argv[k], "-r") && k + 1 < argc) {
            request = strtoul(argv[++k], NULL, 10);
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
            fprintf(stderr, "usage: evp_bench [-b BUFFER] [-r REQUEST] [--passes N|ENC,DEC] "
                            "EVP_NAME\n");
            return 2;
        }
    }
    if (!name) {
        fprintf(stderr, "usage: evp_bench [-b BUFFER] [-r REQUEST] [--passes N|ENC,DEC] "
                        "EVP_NAME\n");
        return 2;
    }
    if (!buffer || !request || request > buffer || buffer % request)
        die("the buffer must be a positive multiple of the request size");
    cipher = EVP_get_cipherbyname(name);
    if (!cipher)
        die("unknown cipher");
    aead = (EVP_CIPHER_get_flags(cipher) & EVP_CIPH_FLAG_AEAD_CIPHER) != 0;
    if (EVP_CIPHER_get_key_length(cipher) > (int)sizeof key)
        die("key too long");
    ivlen = EVP_CIPHER_get_iv_length(cipher);
    if (ivlen > (int)sizeof iv)
        die("IV too long");
    for (i = 0; i < sizeof key; i++)
        key[i] = (unsigned char)(i * 37 + 11);
    buf = malloc(buffer);
    if (!buf)
        die("out of memory");
    for (i = 0; i < buffer; i++)
        buf[i] = (unsigned char)(i * 131 + 7);
    nreq = buffer / request;
    ctx = EVP_CIPHER_CTX_new();
    if (!ctx || !EVP_CipherInit_ex(ctx, cipher, NULL, key, NULL, 1))
        die("cannot set the key");
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    memset(tag, 0, sizeof tag);
    for (k = 0; k < 2; k++) {
        int enc = k == 0;
        for (p = 0; p < passes[k]; p++) {
            for (i = 0; i < nreq; i++) {
                unsigned char *chunk = buf + i * request;
                memset(iv, 0, sizeof iv);
                memcpy(iv, &i, sizeof i < (size_t)ivlen ? sizeof i : (size_t)ivlen);
                if (!EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, enc))
                    die("cannot set the IV");
                if (aead && !enc &&
                    !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, tag))
                    die("cannot set the tag");
                if (!EVP_CipherUpdate(ctx, chunk, &outl, chunk, (int)request) ||
                    (size_t)outl != request)
                    die("cipher update failed");
                if (aead) {
                    EVP_CipherFinal_ex(ctx, chunk + outl, &outl); /* see above */
                    ERR_clear_error();
                    if (enc && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, tag))
                        die("cannot get the tag");
                }
            }
        }
    }
    EVP_CIPHER_CTX_free(ctx);
    free(buf);
    printf("%s %zu %zu\n", name, buffer * (size_t)passes[0], buffer * (size_t)passes[1]);
    return 0;
}
