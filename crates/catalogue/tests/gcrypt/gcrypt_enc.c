/*
 * gcrypt_enc: one libgcrypt cipher call over stdin, for the cross-checks in
 * ../crosscheck.rs.
 *
 *   gcrypt_enc ALGO MODE enc|dec KEYHEX IVHEX < in > out
 *
 * ALGO: aes128 aes192 aes256 serpent128 serpent192 serpent256 twofish128
 *       twofish256 camellia128 camellia192 camellia256
 * MODE: ecb cbc ctr xts
 * IVHEX: the IV (cbc), initial counter block (ctr) or tweak (xts); "-" for ecb.
 * For xts KEYHEX is key1 || key2 (data key, then tweak key).
 *
 * The whole input is processed by a single gcry_cipher_encrypt/decrypt call,
 * so an XTS input is one data unit (with ciphertext stealing if it is not a
 * whole number of blocks).
 */
#include <gcrypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, gcry_error_t err)
{
    if (err)
        fprintf(stderr, "gcrypt_enc: %s: %s\n", what, gcry_strerror(err));
    else
        fprintf(stderr, "gcrypt_enc: %s\n", what);
    exit(2);
}

static int nibble(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static unsigned char *unhex(const char *s, size_t *len)
{
    size_t n = strlen(s);
    unsigned char *out;
    size_t i;

    if (n % 2)
        die("odd-length hex argument", 0);
    out = malloc(n / 2 + 1);
    if (!out)
        die("out of memory", 0);
    for (i = 0; i < n / 2; i++) {
        int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            die("bad hex digit", 0);
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    *len = n / 2;
    return out;
}

static int algo_of(const char *name)
{
    static const struct {
        const char *name;
        int algo;
    } table[] = {
        {"aes128", GCRY_CIPHER_AES128},
        {"aes192", GCRY_CIPHER_AES192},
        {"aes256", GCRY_CIPHER_AES256},
        {"serpent128", GCRY_CIPHER_SERPENT128},
        {"serpent192", GCRY_CIPHER_SERPENT192},
        {"serpent256", GCRY_CIPHER_SERPENT256},
        {"twofish128", GCRY_CIPHER_TWOFISH128},
        {"twofish256", GCRY_CIPHER_TWOFISH},
        {"camellia128", GCRY_CIPHER_CAMELLIA128},
        {"camellia192", GCRY_CIPHER_CAMELLIA192},
        {"camellia256", GCRY_CIPHER_CAMELLIA256},
    };
    size_t i;

    for (i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i].name) == 0)
            return table[i].algo;
    die("unknown algorithm", 0);
    return 0;
}

static int mode_of(const char *name)
{
    if (strcmp(name, "ecb") == 0)
        return GCRY_CIPHER_MODE_ECB;
    if (strcmp(name, "cbc") == 0)
        return GCRY_CIPHER_MODE_CBC;
    if (strcmp(name, "ctr") == 0)
        return GCRY_CIPHER_MODE_CTR;
    if (strcmp(name, "xts") == 0)
        return GCRY_CIPHER_MODE_XTS;
    die("unknown mode", 0);
    return 0;
}

static unsigned char *read_all(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0, got;
    unsigned char *buf = malloc(cap);

    if (!buf)
        die("out of memory", 0);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf)
                die("out of memory", 0);
        }
    }
    if (ferror(f))
        die("reading stdin", 0);
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    gcry_cipher_hd_t hd;
    gcry_error_t err;
    unsigned char *key, *iv = NULL, *data;
    size_t key_len, iv_len = 0, len;
    int algo, mode, encrypt;

    if (argc != 6)
        die("usage: gcrypt_enc ALGO MODE enc|dec KEYHEX IVHEX|- < in > out", 0);
    if (!gcry_check_version(GCRYPT_VERSION))
        die("libgcrypt version mismatch", 0);
    gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);

    algo = algo_of(argv[1]);
    mode = mode_of(argv[2]);
    if (strcmp(argv[3], "enc") == 0)
        encrypt = 1;
    else if (strcmp(argv[3], "dec") == 0)
        encrypt = 0;
    else
        die("direction must be enc or dec", 0);
    key = unhex(argv[4], &key_len);
    if (strcmp(argv[5], "-") != 0)
        iv = unhex(argv[5], &iv_len);
    data = read_all(stdin, &len);

    err = gcry_cipher_open(&hd, algo, mode, 0);
    if (err)
        die("gcry_cipher_open", err);
    err = gcry_cipher_setkey(hd, key, key_len);
    if (err)
        die("gcry_cipher_setkey", err);
    if (iv) {
        if (mode == GCRY_CIPHER_MODE_CTR)
            err = gcry_cipher_setctr(hd, iv, iv_len);
        else
            err = gcry_cipher_setiv(hd, iv, iv_len);
        if (err)
            die("setting the IV", err);
    }
    if (encrypt)
        err = gcry_cipher_encrypt(hd, data, len, NULL, 0);
    else
        err = gcry_cipher_decrypt(hd, data, len, NULL, 0);
    if (err)
        die(encrypt ? "gcry_cipher_encrypt" : "gcry_cipher_decrypt", err);
    if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
        die("writing stdout", 0);
    gcry_cipher_close(hd);
    free(key);
    free(iv);
    free(data);
    return 0;
}
