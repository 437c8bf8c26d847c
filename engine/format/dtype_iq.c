/* The grid formats IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS and IQ3_S:
   their code books, a decoder of their super-blocks, the reference
   dequantizers and simple quantizers (for `ember synth` and the tests).
 *
 * Each group of 8 elements (IQ3: 4) is one point of a code book: a vector
 * whose coordinates take 3 levels (IQ2: 8, 25, 43; IQ1: -1, 0, 1) or 8
 * (IQ3_XXS: 4, 12, ..., 52, 62; IQ3_S: 1, 3, ..., 15).  The books are fixed
 * subsets of all such vectors, numbered in the order of the vectors read as
 * numbers whose first element is the least significant digit; that is how
 * ggml lists them (its iq*_grid tables).  So each book is stored here as a
 * bitmap over all the vectors, and its points are enumerated at first use.
 *
 * Signs: IQ2_XXS, IQ2_XS and IQ3_XXS store 7 sign bits per 8 elements; the
 * eighth makes the count of minus signs even.  IQ2_S and IQ3_S store all 8.
 * IQ1 has no signs (its levels are signed) but shifts each group by +-1/8. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "dtype_rows.h"

/* IQ2_XXS: 256 of the 3^8 points */
static const uint64_t set_iq2xxs[103] = {
    0x4141441055141555, 0x0000100044140400, 0x0040001400400400, 0x1050000004000000,
    0x4004140100114140, 0x0500001000400450, 0x0001000050000010, 0x4004144100004000,
    0x0400000400001414, 0x0000000000040000, 0x0000000000100400, 0x0010100414000000,
    0x1001040011040040, 0x0000000100404000, 0x0000000004010000, 0x0000400440041000,
    0x0000100000000004, 0x1000400000001000, 0x0000000000000000, 0x0040000004000105,
    0x0000000000110000, 0x0000000001000000, 0x0414000000000040, 0x0000050100010000,
    0x0000001010000000, 0x0000000000500000, 0x0000414000000000, 0x0040000000004001,
    0x0000004000040000, 0x0000000000000000, 0x0000040040000040, 0x0000000004000000,
    0x0000000000000000, 0x0000000001000000, 0x0110104144105000, 0x0000400010000414,
    0x0040400000440400, 0x4000000100404000, 0x0010000000010010, 0x0000001004000010,
    0x0000000100000000, 0x0414000000000000, 0x0000000000011000, 0x0401100000000004,
    0x0004000000000000, 0x0050441000040000, 0x0100000104000000, 0x0000000000040000,
    0x0000000000000001, 0x0000000000000040, 0x0001000001400000, 0x0400000000000000,
    0x0000000100000000, 0x0400000004100400, 0x0040000000000000, 0x0004000000000000,
    0x0000000000000000, 0x0001000001000041, 0x0040000000004000, 0x0000400000000000,
    0x0011000000001000, 0x0000000000000000, 0x0400000000001400, 0x0000000000000000,
    0x0000000000000000, 0x0000000000000001, 0x0000000000000000, 0x0000000000000000,
    0x0004000041400000, 0x0040040000004000, 0x0000000000000004, 0x0000000000000004,
    0x0040001000441400, 0x0400000004000000, 0x0004000010000000, 0x4000000001000040,
    0x0000000000000000, 0x0000000000010000, 0x0000010000000000, 0x0104000000000000,
    0x0100000000000410, 0x0040000000004000, 0x0001000000000000, 0x0040000400000000,
    0x0000000000000001, 0x0000000001000000, 0x0000000000000000, 0x0000000000000000,
    0x0100000000001000, 0x0000000000000000, 0x0000000000000000, 0x0000100000000400,
    0x0000000100000004, 0x0000040000000000, 0x0000000000000000, 0x0000000000000400,
    0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000040000,
    0x0000000000000004, 0x0000000000000000, 0x0000000000000000,
};
/* IQ2_XS: 512 of the 3^8 points */
static const uint64_t set_iq2xs[103] = {
    0x1541455551555555, 0x4145505555540145, 0x4010515400010510, 0x5550000101000441,
    0x0004140115154145, 0x0404010500414550, 0x0005100041400000, 0x1105554000004000,
    0x0540400010010414, 0x0010400000040001, 0x0000000104000100, 0x4550515554011000,
    0x1051540001054041, 0x5000500100004140, 0x0000010000400011, 0x1001450041455000,
    0x0100004140000004, 0x0400400000000000, 0x0000000000010000, 0x0400004004000505,
    0x0000000000110000, 0x0000000000000004, 0x5555000000000040, 0x0400010000414010,
    0x0010001040001050, 0x0000010000100000, 0x4000414400000400, 0x0040000000000001,
    0x1000000010040000, 0x0000000001000100, 0x0000040141100000, 0x0000000400100001,
    0x0000010010000000, 0x0144000000001001, 0x1105554145555000, 0x0500414550000414,
    0x0141404000440001, 0x4000000000000140, 0x0010000414014515, 0x0000041001050001,
    0x4000010100400000, 0x0414000000000010, 0x0000000101011000, 0x0040004100001004,
    0x0000000000400000, 0x1041455000000000, 0x4140000004000105, 0x0000000000050004,
    0x0000001000000040, 0x0004040105400000, 0x0000410100004010, 0x0000001040000000,
    0x0000100000001000, 0x0000404000400404, 0x0140100000010000, 0x0000000000000000,
    0x4000004000000000, 0x0100101001000041, 0x0000000000005000, 0x0010000000000000,
    0x4001000100000004, 0x0000000000000000, 0x0000000110000400, 0x0000000000001000,
    0x0000001000000000, 0x0000000001000000, 0x0000000000000400, 0x0010100000000400,
    0x0415010515400000, 0x0001155000005000, 0x0100000000041004, 0x0001400000000400,
    0x0040001000541441, 0x0100000004000040, 0x0400004000000000, 0x1000000100000000,
    0x0014010000040004, 0x0000000000040400, 0x0004000000000000, 0x0105100404100000,
    0x0000010001000400, 0x0001000000100001, 0x0400000000000000, 0x0000004400004000,
    0x0000000000001041, 0x0014000000001000, 0x0000000100000000, 0x0400000000000000,
    0x0000000400000000, 0x0000000000000100, 0x0000001000000010, 0x0000000404014500,
    0x4000000000010000, 0x0001144000000010, 0x0004000100000010, 0x4000000000400000,
    0x0000000000000000, 0x0000000000000000, 0x0040000400004000, 0x1040000000000045,
    0x0500000000000004, 0x0000050000000000, 0x0000000100010000,
};
/* IQ2_S: 1024 of the 3^8 points */
static const uint64_t set_iq2s[103] = {
    0x1555455551555555, 0x5545505155551105, 0x5010515414150514, 0x5550101111000455,
    0x5145541555555545, 0x5414555514555550, 0x1451000455401051, 0x1155154000105004,
    0x0540010110515555, 0x0040401051440455, 0x0000100510140100, 0x4551515554004000,
    0x5555541451151555, 0x5000145505155545, 0x0414000504414114, 0x1455551455455000,
    0x5505155540105154, 0x0514400010500414, 0x4000001000041401, 0x0140105154045155,
    0x0010500414550000, 0x1000041004000010, 0x5154000000000400, 0x0011010405415115,
    0x1401050540415054, 0x0104510010100004, 0x0514554400050000, 0x1440001050041455,
    0x0000110004140105, 0x0004000400010500, 0x1050001411000000, 0x0004150000400000,
    0x0000100000000000, 0x0140040000004004, 0x1555554555555000, 0x5505554550514414,
    0x1541401051541455, 0x4000005004145104, 0x4550515554555555, 0x1051541455550041,
    0x5004145500004150, 0x5514100000400010, 0x0001040041455051, 0x0100004140105154,
    0x0000400010500040, 0x1555455000000000, 0x5540005154145555, 0x0010500414550515,
    0x1400041401051440, 0x5154145555000000, 0x0414550000414010, 0x1400000040001050,
    0x0000000000110004, 0x0040414010515400, 0x0040001050000001, 0x1000100000000000,
    0x4400004000000000, 0x1040041451051545, 0x0004140105154000, 0x0400010400100010,
    0x1451010000000100, 0x0000004000105004, 0x0010001010000414, 0x0000000000040004,
    0x0000105000100000, 0x0010010000100000, 0x0000000000004000, 0x0000000400000000,
    0x5414114515404000, 0x1455450001411011, 0x1140004140005154, 0x0000000010500015,
    0x0041455011555400, 0x4140105154000105, 0x0010500001010000, 0x1000000000000050,
    0x0000000105000141, 0x4000010000014040, 0x0004000000000000, 0x5545010000400500,
    0x0000414010515410, 0x0000101050001411, 0x0000100004140000, 0x4010515440000000,
    0x1050004001000041, 0x1100000000004000, 0x0010001000000010, 0x0001100041400000,
    0x0000005000000000, 0x0000000000001100, 0x0040000000000000, 0x0000105410111100,
    0x0010000001040000, 0x4004100000000400, 0x5100014400000014, 0x0100000000400010,
    0x0000000010001040, 0x0000000000000000, 0x0040000000000004, 0x0100000000000040,
    0x0400004000000000, 0x0000011401400000, 0x0000000100001000,
};
/* IQ3_XXS: 256 of the 8^4 points */
static const uint64_t set_iq3xxs[64] = {
    0x2800000402058a15, 0x010010020522050a, 0x200082008a050215, 0x0100000000200582,
    0x2800801080000800, 0x0000040004000082, 0x0010000020000000, 0x0002000800005100,
    0x00000180150a050a, 0x0000000000050205, 0x040000000102050a, 0x0040004002010005,
    0x0000010000000022, 0x0200004000110000, 0x0000000000000020, 0x0000000100040000,
    0x0000000402450a05, 0x018800000102052a, 0x0000200180058205, 0x1100000000001102,
    0x0000080020000000, 0x1000000200800008, 0x0000000000000000, 0x000000200000400a,
    0x04200100000a0502, 0x0000005002010005, 0x040004000020010a, 0x0000000008000200,
    0x0400008001000000, 0x0000200000040041, 0x0008000040001000, 0x0001000008000000,
    0x00008800a0008010, 0x1000000000000000, 0x0041000180010000, 0x0000002000000080,
    0x0010020000000010, 0x0100000800200000, 0x0000000000000000, 0x0000000001000520,
    0x0100000200000400, 0x0000200000400041, 0x0400000004001000, 0x0000080000000004,
    0x0400000000880100, 0x0000000002000004, 0x0000010000000000, 0x0000000400100000,
    0x0010005000100000, 0x0002000000020000, 0x0010000000008000, 0x0000000041000000,
    0x0000001000000000, 0x0000040000000020, 0x0000000008000000, 0x0000000000020008,
    0x00000400040001a8, 0x0000000100400000, 0x0000042000000400, 0x0001000008002001,
    0x0000000200020000, 0x0000000000100005, 0x0000000001000000, 0x0000000000000000,
};
/* IQ3_S: 512 of the 8^4 points */
static const uint64_t set_iq3s[64] = {
    0x92050aa5082357a7, 0x0422001022892317, 0x09000aa4112249a3, 0x228005104a052208,
    0x0100020904128801, 0x084000a208450014, 0x0200040002000a40, 0x0000110008450015,
    0x040250005205ab17, 0x410005020902114b, 0x040120090411a401, 0x0104000211820992,
    0x000011440a001428, 0x0000020005020902, 0x0000005000910000, 0x010400022002050a,
    0x2980052a058a55ab, 0x0000020412248905, 0x12008802810a0092, 0x004001040a140225,
    0x2400000224090082, 0x0100080180040210, 0x0002200000020085, 0x0000010801400220,
    0x020802942a04aa04, 0x44010001000a102a, 0x0000010014010401, 0x0800208a018a1102,
    0x0011040002044208, 0x0800401004200502, 0x0000000200004000, 0x000000002005000a,
    0x0100010204910411, 0x0000220821040a84, 0x010480010802210a, 0x0000000022050a10,
    0x0200000180100005, 0x00040000000200a0, 0x0001000010000800, 0x0000020801002100,
    0x1040049100041104, 0x040000000402042a, 0x0000080041080201, 0x0820021000800184,
    0x0000004004010012, 0x00000a0000400400, 0x0000000400000000, 0x0000000000040014,
    0x000100000a002a00, 0x0010000000810001, 0x0104200410000400, 0x0000000100021001,
    0x0004000800200000, 0x0001000010000009, 0x0000000100000020, 0x0000000000000a00,
    0x0004100140050091, 0x0000002800100204, 0x0000020001024112, 0x0000080024000004,
    0x0000010000010822, 0x0000000400040000, 0x0000000002000004, 0x0000000000000001,
};
/* IQ1_S and IQ1_M: 2048 of the 3^8 points */
static const uint64_t set_iq1s[103] = {
    0x514202a085142555, 0xa28a2086a8314508, 0x14508514202a081a, 0xa005152545442082,
    0x8208001888208202, 0x0aaabb88a02a03a0, 0xaa0a0022000baa90, 0x4508514008a0828c,
    0x0851421450808821, 0x2a8008a09808308a, 0x4248208514214508, 0x20a0c22c01450855,
    0xa2aaa8242a00268a, 0x0028280808afe208, 0xa82028aa284202a0, 0xa8bab9089b0a2080,
    0x3aaaaea289aeca20, 0xb80e82bbbaeaeb7c, 0x2202920ed3caba22, 0x820aba8aa8202200,
    0x3ba2e04a2a000802, 0x81408100a22b2022, 0x8514012208288aaa, 0x5421450920821550,
    0x203aa8230208a085, 0xa208514254208284, 0x082a021450950820, 0x200248a08082a8b8,
    0xab2802a268a28208, 0x083082082085082a, 0xa085142145004045, 0x8229014500514200,
    0x1430a1082a828a00, 0x2145082882145005, 0x2aaa200202208514, 0xa828ae8ab1122000,
    0x0a820070a8aaa1ba, 0x8200840222280208, 0xaa2ab0eaa0804800, 0xa7daea22ba8b20c2,
    0xaa2ab092a86e8b8b, 0x48202a0c448a8b72, 0x20aa082a8a284084, 0xa09aafa222a2ccc8,
    0xa82a00020002a8e8, 0xa2a28ba080200088, 0xba0a328280a0ba28, 0x2ba0a2ebfebab8be,
    0x00a2ea280a8a08a2, 0xdeeaa4fa0c0232a1, 0xeb7ebe8d2ea82bef, 0xdeba7de6bf7ff7fa,
    0x12fa26bfff27fb69, 0x0ebeaa10228ae1e9, 0xae820ba8b208aa84, 0x62048083e924baff,
    0x002ba40aa8f2682c, 0x0012aae208082a02, 0x82c920a60a2a8202, 0x8c00a20028829089,
    0x6c00080882001380, 0x8abea602bbaaaa8a, 0xd02e976b8002caa0, 0xdeaa2e108210e9b2,
    0x820a0004a5d11528, 0x20a1010820828a00, 0xa0843222ba39aa82, 0x0262a28a00188009,
    0xac21450051441481, 0x20aa085142145082, 0x45082a120a87aa28, 0x08514208a0051421,
    0x22a240a002200145, 0x8a6a08a208008800, 0x0a200080aaaab86e, 0x5044082122c8e282,
    0x8515208a09514214, 0x2a2aaa080a861450, 0x21450851420a0080, 0xe2085142145000a8,
    0x082a82180a828820, 0x0a028bb08aaaa2aa, 0x0aaa80822820aa2a, 0x220288a900280828,
    0xba8a08b8280bbea0, 0xaef8a4baffaeb24b, 0x30a0b668285220aa, 0x6a220828020a80e6,
    0x2baaaa020a208062, 0x0808a2a0a9a2eaaa, 0x0e8200228aa02010, 0x400aa08514214500,
    0x4a0006a921450851, 0x440d1000a50802aa, 0x0514214508288214, 0x0020f2ac82820800,
    0x20ba0a280aaa0000, 0x280948820002a2ea, 0x0051454b110014e9, 0x5142145002a80145,
    0x400a288808248808, 0x02a0051401450008, 0x0000000145085140,
};

enum { G_IQ2XXS, G_IQ2XS, G_IQ2S, G_IQ3XXS, G_IQ3S, G_IQ1S, G_COUNT };

static const int8_t lev_iq2[3] = {8, 25, 43};
static const int8_t lev_iq3xxs[8] = {4, 12, 20, 28, 36, 44, 52, 62};
static const int8_t lev_iq3s[8] = {1, 3, 5, 7, 9, 11, 13, 15};
static const int8_t lev_iq1[3] = {-1, 0, 1};

typedef struct {
    const uint64_t *set; /* bitmap over the nlev^dims vectors */
    int dims, nlev, n;
    const int8_t *lev;
} grid_def;

static const grid_def GRIDS[G_COUNT] = {
    [G_IQ2XXS] = {set_iq2xxs, 8, 3, 256, lev_iq2},
    [G_IQ2XS] = {set_iq2xs, 8, 3, 512, lev_iq2},
    [G_IQ2S] = {set_iq2s, 8, 3, 1024, lev_iq2},
    [G_IQ3XXS] = {set_iq3xxs, 4, 8, 256, lev_iq3xxs},
    [G_IQ3S] = {set_iq3s, 4, 8, 512, lev_iq3s},
    [G_IQ1S] = {set_iq1s, 8, 3, 2048, lev_iq1},
};

typedef struct {
    int type, grid;
    int gs;      /* elements per scale field: 16 or 32 */
    int smax;    /* largest scale field */
    int parity;  /* 7 stored sign bits per 8 elements */
    float c;     /* the multiplier is d * c * (2s + 1) */
    float top;   /* the largest magnitude a point reaches */
} qdef;

/* One row per grid type: its book and how its scales and signs are laid
   out (the quantizer's plan; c is also the kernels' final factor). */
static const qdef QDEFS[] = {
    {EMBER_IQ2_XXS, G_IQ2XXS, 32, 15, 1, 0.125f, 43},
    {EMBER_IQ2_XS, G_IQ2XS, 16, 15, 1, 0.125f, 43},
    {EMBER_IQ2_S, G_IQ2S, 16, 15, 0, 0.125f, 43},
    {EMBER_IQ3_XXS, G_IQ3XXS, 32, 15, 1, 0.25f, 62},
    {EMBER_IQ3_S, G_IQ3S, 32, 15, 0, 1.0f, 15},
    {EMBER_IQ1_S, G_IQ1S, 32, 7, 0, 1.0f, 1.125f},
    {EMBER_IQ1_M, G_IQ1S, 16, 7, 0, 1.0f, 1.125f},
};

static const qdef *qdef_of(int type)
{
    for (size_t i = 0; i < sizeof QDEFS / sizeof QDEFS[0]; i++)
        if (QDEFS[i].type == type) return &QDEFS[i];
    return NULL;
}

/* How many vectors a book's levels make (nlev^dims). */
static int grid_vectors(const grid_def *d)
{
    int total = 1;
    for (int i = 0; i < d->dims; i++) total *= d->nlev;
    return total;
}

/* Vector k's coordinates: its digits in base nlev, the first coordinate
   the least significant, each as its level's value. */
static void grid_vector(const grid_def *d, int k, int8_t *v)
{
    for (int i = 0; i < d->dims; i++, k /= d->nlev) v[i] = d->lev[k % d->nlev];
}

/* The points of each book. */
static int8_t pts_iq2xxs[256][8], pts_iq2xs[512][8], pts_iq2s[1024][8];
static int8_t pts_iq3xxs[256][8], pts_iq3s[512][8], pts_iq1s[2048][8];
static int8_t (*const PTS[G_COUNT])[8] = {pts_iq2xxs, pts_iq2xs, pts_iq2s, pts_iq3xxs, pts_iq3s, pts_iq1s};
/* The 7-bit sign fields with their parity bit (ggml's ksigns_iq2xs). */
static uint8_t ksigns[128];
/* Each 8-bit sign mask as 8 bytes of +1 / -1 (the SIMD kernels multiply by
   them with vpsignb) */
static uint64_t sign_bytes[256];
/* and the 7-bit fields' masks (with their parity bit) likewise */
static uint64_t ksign_bytes[128];
static int grids_ok;

static void grids_build(void)
{
    for (int g = 0; g < G_COUNT; g++) {
        const grid_def *d = &GRIDS[g];
        int total = grid_vectors(d), n = 0;
        for (int k = 0; k < total; k++) {
            if (!(d->set[k / 64] >> (k % 64) & 1)) continue;
            if (n == d->n) return; /* more bits than points: grids_ok stays 0 */
            grid_vector(d, k, PTS[g][n++]);
        }
        if (n != d->n) return;
    }
    for (int i = 0; i < 128; i++) ksigns[i] = (uint8_t)(i | (__builtin_popcount((unsigned)i) & 1) << 7);
    for (int m = 0; m < 256; m++) {
        sign_bytes[m] = 0;
        for (int j = 0; j < 8; j++) sign_bytes[m] |= (uint64_t)(m >> j & 1 ? 0xff : 0x01) << 8 * j;
    }
    for (int i = 0; i < 128; i++) ksign_bytes[i] = sign_bytes[ksigns[i]];
    grids_ok = 1;
}

static pthread_once_t grids_once = PTHREAD_ONCE_INIT;
static void grids_init(void) { pthread_once(&grids_once, grids_build); }

int ember_iq_grid_points(int g, int8_t (*out)[8])
{
    grids_init();
    if (!grids_ok || g < 0 || g >= G_COUNT) return -1;
    if (out) memcpy(out, PTS[g], (size_t)GRIDS[g].n * 8);
    return GRIDS[g].n;
}

const int8_t (*ember_iq_points(int type))[8]
{
    const qdef *q = qdef_of(type);
    grids_init();
    return q && grids_ok ? (const int8_t (*)[8])PTS[q->grid] : NULL;
}

const uint8_t *ember_iq_ksigns(void)
{
    grids_init();
    return grids_ok ? ksigns : NULL;
}

const uint64_t *ember_iq_sign_bytes(void)
{
    grids_init();
    return grids_ok ? sign_bytes : NULL;
}

const uint64_t *ember_iq_ksign_bytes(void)
{
    grids_init();
    return grids_ok ? ksign_bytes : NULL;
}

bool ember_iq_is_grid(int type) { return qdef_of(type) != NULL; }

float ember_iq_scale_factor(int type)
{
    const qdef *q = qdef_of(type);
    return q ? q->c : 1.0f;
}

/* n elements of a point with the signs of the bits of `signs` applied. */
static void put_signed(int8_t *v, const int8_t *pt, unsigned signs, int n)
{
    for (int j = 0; j < n; j++) v[j] = (int8_t)(signs >> j & 1 ? -pt[j] : pt[j]);
}

void ember_iq_decode(int type, const void *blk, ember_iq_block *o)
{
    grids_init();
    memset(o->delta, 0, sizeof o->delta);
    switch (type) {
    case EMBER_IQ2_XXS: {
        const block_iq2_xxs *b = blk;
        o->d = ember_fp16_to_f32(b->d);
        for (int ib = 0; ib < 8; ib++) {
            uint32_t a0 = b->qs[4 * ib] | (uint32_t)b->qs[4 * ib + 1] << 16;
            uint32_t a1 = b->qs[4 * ib + 2] | (uint32_t)b->qs[4 * ib + 3] << 16;
            o->s[2 * ib] = o->s[2 * ib + 1] = (uint8_t)(a1 >> 28);
            for (int l = 0; l < 4; l++)
                put_signed(o->v + 32 * ib + 8 * l, pts_iq2xxs[a0 >> 8 * l & 255], ksigns[a1 >> 7 * l & 127], 8);
        }
        break;
    }
    case EMBER_IQ2_XS: {
        const block_iq2_xs *b = blk;
        o->d = ember_fp16_to_f32(b->d);
        for (int ib = 0; ib < 8; ib++) {
            o->s[2 * ib] = b->scales[ib] & 15;
            o->s[2 * ib + 1] = b->scales[ib] >> 4;
            for (int l = 0; l < 4; l++) {
                unsigned q = b->qs[4 * ib + l];
                put_signed(o->v + 32 * ib + 8 * l, pts_iq2xs[q & 511], ksigns[q >> 9], 8);
            }
        }
        break;
    }
    case EMBER_IQ2_S: {
        const block_iq2_s *b = blk;
        o->d = ember_fp16_to_f32(b->d);
        for (int ib = 0; ib < 8; ib++) {
            o->s[2 * ib] = b->scales[ib] & 15;
            o->s[2 * ib + 1] = b->scales[ib] >> 4;
            for (int l = 0; l < 4; l++) {
                unsigned idx = b->qs[4 * ib + l] | (unsigned)(b->qh[ib] >> 2 * l & 3) << 8;
                put_signed(o->v + 32 * ib + 8 * l, pts_iq2s[idx], b->qs[QK_K / 8 + 4 * ib + l], 8);
            }
        }
        break;
    }
    case EMBER_IQ3_XXS: {
        const block_iq3_xxs *b = blk;
        o->d = ember_fp16_to_f32(b->d);
        for (int ib = 0; ib < 8; ib++) {
            uint32_t aux = ember_le32(b->qs + QK_K / 4 + 4 * ib);
            o->s[2 * ib] = o->s[2 * ib + 1] = (uint8_t)(aux >> 28);
            for (int l = 0; l < 4; l++) {
                unsigned sg = ksigns[aux >> 7 * l & 127];
                put_signed(o->v + 32 * ib + 8 * l, pts_iq3xxs[b->qs[8 * ib + 2 * l]], sg & 15, 4);
                put_signed(o->v + 32 * ib + 8 * l + 4, pts_iq3xxs[b->qs[8 * ib + 2 * l + 1]], sg >> 4, 4);
            }
        }
        break;
    }
    case EMBER_IQ3_S: {
        const block_iq3_s *b = blk;
        o->d = ember_fp16_to_f32(b->d);
        for (int ib = 0; ib < 8; ib++) {
            o->s[2 * ib] = o->s[2 * ib + 1] = (uint8_t)(b->scales[ib / 2] >> 4 * (ib % 2) & 15);
            for (int g = 0; g < 8; g++) {
                unsigned idx = b->qs[8 * ib + g] | (unsigned)(b->qh[ib] >> g & 1) << 8;
                put_signed(o->v + 32 * ib + 4 * g, pts_iq3s[idx], (unsigned)b->signs[4 * ib + g / 2] >> 4 * (g % 2) & 15, 4);
            }
        }
        break;
    }
    case EMBER_IQ1_S: {
        const block_iq1_s *b = blk;
        o->d = ember_fp16_to_f32(b->d);
        for (int ib = 0; ib < 8; ib++) {
            unsigned q = b->qh[ib];
            o->s[2 * ib] = o->s[2 * ib + 1] = (uint8_t)(q >> 12 & 7);
            for (int l = 0; l < 4; l++) {
                memcpy(o->v + 32 * ib + 8 * l, pts_iq1s[b->qs[4 * ib + l] | (q >> 3 * l & 7) << 8], 8);
                o->delta[4 * ib + l] = q & 0x8000 ? -1 : 1;
            }
        }
        break;
    }
    case EMBER_IQ1_M: {
        const block_iq1_m *b = blk;
        o->d = ember_fp16_to_f32(ember_iq1_m_d(b));
        for (int ib = 0; ib < 8; ib++) {
            unsigned w = ember_iq1_m_scale_word(b, ib / 2) >> 6 * (ib % 2);
            o->s[2 * ib] = (uint8_t)(w & 7);
            o->s[2 * ib + 1] = (uint8_t)(w >> 3 & 7);
            for (int l = 0; l < 4; l++) {
                unsigned h = b->qh[2 * ib + l / 2] >> 4 * (l % 2);
                memcpy(o->v + 32 * ib + 8 * l, pts_iq1s[b->qs[4 * ib + l] | (h & 7) << 8], 8);
                o->delta[4 * ib + l] = h & 8 ? -1 : 1;
            }
        }
        break;
    }
    default:
        memset(o, 0, sizeof *o);
    }
}

/* ---- dequantization, in ggml's float order ------------------------------ */

/* The float multiplier of 16 elements, as each reference dequantizer
   computes it: IQ2 d * (0.5 + s) * 0.25, IQ3_XXS d * (0.5 + s) * 0.5, IQ3_S
   and IQ1 d * (2s + 1). */
static float group_scale(int type, float d, int s)
{
    switch (type) {
    case EMBER_IQ2_XXS: case EMBER_IQ2_XS: case EMBER_IQ2_S: return d * (0.5f + (float)s) * 0.25f;
    case EMBER_IQ3_XXS: return d * (0.5f + (float)s) * 0.5f;
    default: return d * (float)(2 * s + 1);
    }
}

static void to_float_grid(int type, const void *src, size_t bb, float *y, int64_t nb)
{
    ember_iq_block o;
    int iq1 = type == EMBER_IQ1_S || type == EMBER_IQ1_M;
    for (int64_t i = 0; i < nb; i++, y += QK_K) {
        ember_iq_decode(type, (const uint8_t *)src + (size_t)i * bb, &o);
        for (int g = 0; g < QK_K / 16; g++) {
            float db = group_scale(type, o.d, o.s[g]);
            for (int j = 16 * g; j < 16 * g + 16; j++)
                y[j] = iq1 ? db * ((float)o.v[j] + (o.delta[j / 8] < 0 ? -0.125f : 0.125f)) : db * (float)o.v[j];
        }
    }
}

#define TO_FLOAT(t, T)                                                                                 \
    void ember_to_float_##t(const void *src, float *y, int64_t nb) { to_float_grid(T, src, sizeof(block_##t), y, nb); }
TO_FLOAT(iq2_xxs, EMBER_IQ2_XXS)
TO_FLOAT(iq2_xs, EMBER_IQ2_XS)
TO_FLOAT(iq2_s, EMBER_IQ2_S)
TO_FLOAT(iq3_xxs, EMBER_IQ3_XXS)
TO_FLOAT(iq3_s, EMBER_IQ3_S)
TO_FLOAT(iq1_s, EMBER_IQ1_S)
TO_FLOAT(iq1_m, EMBER_IQ1_M)
#undef TO_FLOAT

/* ---- quantization --------------------------------------------------------
 * Not the reference's search (which weighs errors by an importance matrix
 * and walks each point's neighbours): each scale group's largest magnitude
 * sets its scale, each coordinate rounds to its nearest level, and the
 * vector of levels maps to the book's point nearest to it (a table over all
 * the vectors, built once).  Valid blocks of fair quality, for `ember synth`
 * and the tests; files people run come quantized already. */

static uint16_t near_3x8[3][6561]; /* IQ2_XXS, IQ2_XS, IQ2_S */
static uint16_t near_iq1[6561];
static uint16_t near_iq3[2][4096]; /* IQ3_XXS, IQ3_S */
static uint16_t *const NEAR[G_COUNT] = {near_3x8[0], near_3x8[1], near_3x8[2], near_iq3[0], near_iq3[1], near_iq1};

static void near_build(void)
{
    grids_init();
    if (!grids_ok) return;
    for (int g = 0; g < G_COUNT; g++) {
        const grid_def *d = &GRIDS[g];
        const int total = grid_vectors(d);
        for (int k = 0; k < total; k++) {
            int8_t v[8];
            grid_vector(d, k, v);
            long best = -1;
            for (int p = 0; p < d->n; p++) {
                long e = 0;
                for (int i = 0; i < d->dims; i++) e += (long)(v[i] - PTS[g][p][i]) * (v[i] - PTS[g][p][i]);
                if (best < 0 || e < best) best = e, NEAR[g][k] = (uint16_t)p;
            }
        }
    }
}

static pthread_once_t near_once = PTHREAD_ONCE_INIT;

/* The book point nearest to t[0..dims-1] (in level units of the grid). */
static int nearest_point(int g, const float *t)
{
    const grid_def *d = &GRIDS[g];
    int k = 0;
    for (int i = d->dims - 1; i >= 0; i--) {
        int best = 0;
        for (int l = 1; l < d->nlev; l++)
            if (fabsf(t[i] - d->lev[l]) < fabsf(t[i] - d->lev[best])) best = l;
        k = k * d->nlev + best;
    }
    return NEAR[g][k];
}

/* A super-block's fields before the bit packing of its type. */
typedef struct {
    uint16_t d16;
    uint8_t s[QK_K / 16];
    uint16_t idx[QK_K / 4];  /* per point: 32 of 8 elements or 64 of 4 */
    uint8_t signs[QK_K / 8]; /* bit j: element j of the 8 is negative */
    int8_t delta[QK_K / 8];  /* IQ1: -1 or +1 per 8 elements */
} qplan;

/* Squared error of 8 IQ1 elements on point p with delta sign ds. */
static float iq1_err(const float *x, float m, int p, int ds)
{
    float e = 0;
    for (int j = 0; j < 8; j++) {
        float r = x[j] - m * ((float)pts_iq1s[p][j] + (ds < 0 ? -0.125f : 0.125f));
        e += r * r;
    }
    return e;
}

/* The best point and delta sign for n consecutive groups of 8 sharing one
   delta (IQ1_S: 4, IQ1_M: 1). */
static void iq1_groups(const float *x, float m, int n, uint16_t *idx, int8_t *delta)
{
    float best = INFINITY;
    for (int ds = -1; ds <= 1; ds += 2) {
        uint16_t cand[4];
        float e = 0;
        for (int gq = 0; gq < n; gq++) {
            float t[8];
            for (int j = 0; j < 8; j++) t[j] = m > 0 ? x[8 * gq + j] / m - (ds < 0 ? -0.125f : 0.125f) : 0;
            cand[gq] = (uint16_t)nearest_point(G_IQ1S, t);
            e += iq1_err(x + 8 * gq, m, cand[gq], ds);
        }
        if (ds < 0 || e < best) {
            best = e;
            for (int gq = 0; gq < n; gq++) idx[gq] = cand[gq], delta[gq] = (int8_t)ds;
        }
    }
}

/* The points (and IQ1's delta signs) for one scale group of gs elements at
   multiplier mul; returns the squared error. */
static float quant_group(const qdef *q, const float *xg, float mul, uint16_t *idx, int8_t *delta)
{
    if (q->grid == G_IQ1S) {
        int per = q->gs == 32 ? 4 : 1; /* groups of 8 sharing a delta */
        for (int u = 0; u < q->gs / 8; u += per) iq1_groups(xg + 8 * u, mul, per, idx + u, delta + u);
        float e = 0;
        for (int u = 0; u < q->gs / 8; u++) e += iq1_err(xg + 8 * u, mul, idx[u], delta[u]);
        return e;
    }
    int g = q->grid, dims = GRIDS[g].dims;
    float e = 0;
    for (int u = 0; u < q->gs; u += dims) {
        float t[8];
        for (int j = 0; j < dims; j++) t[j] = fabsf(xg[u + j]) / mul;
        int p = nearest_point(g, t);
        idx[u / dims] = (uint16_t)p;
        for (int j = 0; j < dims; j++) {
            float r = fabsf(xg[u + j]) - mul * (float)PTS[g][p][j];
            e += r * r;
        }
    }
    return e;
}

static int plan_block(const qdef *q, const float *x, qplan *p)
{
    memset(p, 0, sizeof *p);
    int ng = QK_K / q->gs;
    float m[QK_K / 16], mmax = 0;
    for (int g = 0; g < ng; g++) {
        float a = 0;
        for (int j = 0; j < q->gs; j++) a = fmaxf(a, fabsf(x[g * q->gs + j]));
        if (!(a < INFINITY)) return 0;
        m[g] = a / q->top;
        mmax = fmaxf(mmax, m[g]);
    }
    p->d16 = ember_f32_to_fp16(mmax / (q->c * (float)(2 * q->smax + 1)));
    float d = ember_fp16_to_f32(p->d16);
    if (!(d > 0) || !(d < INFINITY)) return 0;
    int iq1 = q->grid == G_IQ1S;
    for (int g = 0; g < ng; g++) {
        /* every scale field, the one with the least squared error kept */
        float best = INFINITY;
        for (int s = 0; s <= q->smax; s++) {
            uint16_t idx[8]; /* at most 32 elements of 4 */
            int8_t delta[4];
            float e = quant_group(q, x + g * q->gs, d * q->c * (float)(2 * s + 1), idx, delta);
            if (!(e >= best)) {
                best = e;
                for (int h = 0; h < q->gs / 16; h++) p->s[g * (q->gs / 16) + h] = (uint8_t)s;
                int dims = GRIDS[q->grid].dims;
                memcpy(p->idx + g * q->gs / dims, idx, sizeof idx[0] * (size_t)(q->gs / dims));
                if (iq1) memcpy(p->delta + g * q->gs / 8, delta, (size_t)(q->gs / 8));
            }
        }
    }
    if (iq1) return 1;
    for (int o = 0; o < QK_K / 8; o++) {
        unsigned sg = 0;
        int small = 0;
        for (int j = 0; j < 8; j++) {
            if (x[8 * o + j] < 0) sg |= 1u << j;
            if (fabsf(x[8 * o + j]) < fabsf(x[8 * o + small])) small = j;
        }
        /* an odd count of minus signs cannot be stored: flip the smallest */
        if (q->parity && (__builtin_popcount(sg) & 1)) sg ^= 1u << small;
        p->signs[o] = (uint8_t)sg;
    }
    return 1;
}

static void pack_block(int type, const qplan *p, void *blk)
{
    switch (type) {
    case EMBER_IQ2_XXS: {
        block_iq2_xxs *b = blk;
        b->d = p->d16;
        for (int ib = 0; ib < 8; ib++) {
            uint32_t a0 = 0, a1 = (uint32_t)p->s[2 * ib] << 28;
            for (int l = 0; l < 4; l++) a0 |= (uint32_t)p->idx[4 * ib + l] << 8 * l, a1 |= (uint32_t)(p->signs[4 * ib + l] & 127) << 7 * l;
            b->qs[4 * ib] = (uint16_t)a0, b->qs[4 * ib + 1] = (uint16_t)(a0 >> 16);
            b->qs[4 * ib + 2] = (uint16_t)a1, b->qs[4 * ib + 3] = (uint16_t)(a1 >> 16);
        }
        break;
    }
    case EMBER_IQ2_XS: {
        block_iq2_xs *b = blk;
        b->d = p->d16;
        for (int ib = 0; ib < 8; ib++) {
            b->scales[ib] = (uint8_t)(p->s[2 * ib] | p->s[2 * ib + 1] << 4);
            for (int l = 0; l < 4; l++) b->qs[4 * ib + l] = (uint16_t)(p->idx[4 * ib + l] | (p->signs[4 * ib + l] & 127) << 9);
        }
        break;
    }
    case EMBER_IQ2_S: {
        block_iq2_s *b = blk;
        b->d = p->d16;
        for (int ib = 0; ib < 8; ib++) {
            b->scales[ib] = (uint8_t)(p->s[2 * ib] | p->s[2 * ib + 1] << 4);
            for (int l = 0; l < 4; l++) {
                b->qs[4 * ib + l] = (uint8_t)p->idx[4 * ib + l];
                b->qh[ib] |= (uint8_t)((p->idx[4 * ib + l] >> 8) << 2 * l);
                b->qs[QK_K / 8 + 4 * ib + l] = p->signs[4 * ib + l];
            }
        }
        break;
    }
    case EMBER_IQ3_XXS: {
        block_iq3_xxs *b = blk;
        b->d = p->d16;
        for (int ib = 0; ib < 8; ib++) {
            uint32_t aux = (uint32_t)p->s[2 * ib] << 28;
            for (int l = 0; l < 4; l++) aux |= (uint32_t)(p->signs[4 * ib + l] & 127) << 7 * l;
            for (int g = 0; g < 8; g++) b->qs[8 * ib + g] = (uint8_t)p->idx[8 * ib + g];
            ember_put_le32(b->qs + QK_K / 4 + 4 * ib, aux);
        }
        break;
    }
    case EMBER_IQ3_S: {
        block_iq3_s *b = blk;
        b->d = p->d16;
        for (int ib = 0; ib < 8; ib++) {
            b->scales[ib / 2] |= (uint8_t)(p->s[2 * ib] << 4 * (ib % 2));
            for (int g = 0; g < 8; g++) {
                b->qs[8 * ib + g] = (uint8_t)p->idx[8 * ib + g];
                b->qh[ib] |= (uint8_t)((p->idx[8 * ib + g] >> 8) << g);
            }
            for (int l = 0; l < 4; l++) b->signs[4 * ib + l] = p->signs[4 * ib + l];
        }
        break;
    }
    case EMBER_IQ1_S: {
        block_iq1_s *b = blk;
        b->d = p->d16;
        for (int ib = 0; ib < 8; ib++) {
            unsigned q = (unsigned)p->s[2 * ib] << 12 | (p->delta[4 * ib] < 0 ? 0x8000u : 0);
            for (int l = 0; l < 4; l++) {
                b->qs[4 * ib + l] = (uint8_t)p->idx[4 * ib + l];
                q |= (unsigned)(p->idx[4 * ib + l] >> 8) << 3 * l;
            }
            b->qh[ib] = (uint16_t)q;
        }
        break;
    }
    case EMBER_IQ1_M: {
        block_iq1_m *b = blk;
        unsigned sc[4] = {0};
        for (int ib = 0; ib < 8; ib++) {
            sc[ib / 2] |= (unsigned)(p->s[2 * ib] | p->s[2 * ib + 1] << 3) << 6 * (ib % 2);
            for (int l = 0; l < 4; l++) {
                b->qs[4 * ib + l] = (uint8_t)p->idx[4 * ib + l];
                unsigned h = (unsigned)(p->idx[4 * ib + l] >> 8) | (p->delta[4 * ib + l] < 0 ? 8u : 0);
                b->qh[2 * ib + l / 2] |= (uint8_t)(h << 4 * (l % 2));
            }
        }
        for (int k = 0; k < 4; k++) {
            sc[k] |= (unsigned)(p->d16 >> 4 * k & 15) << 12;
            b->scales[2 * k] = (uint8_t)sc[k], b->scales[2 * k + 1] = (uint8_t)(sc[k] >> 8);
        }
        break;
    }
    }
}

static void from_float_grid(int type, const float *x, void *dst, size_t bb, int64_t nb)
{
    const qdef *q = qdef_of(type);
    pthread_once(&near_once, near_build);
    for (int64_t i = 0; i < nb; i++, x += QK_K) {
        uint8_t *blk = (uint8_t *)dst + (size_t)i * bb;
        qplan p;
        memset(blk, 0, bb);
        if (grids_ok && plan_block(q, x, &p)) pack_block(type, &p, blk);
    }
}

#define FROM_FLOAT(t, T)                                                                               \
    void ember_from_float_##t(const float *x, void *dst, int64_t nb) { from_float_grid(T, x, dst, sizeof(block_##t), nb); }
FROM_FLOAT(iq2_xxs, EMBER_IQ2_XXS)
FROM_FLOAT(iq2_xs, EMBER_IQ2_XS)
FROM_FLOAT(iq2_s, EMBER_IQ2_S)
FROM_FLOAT(iq3_xxs, EMBER_IQ3_XXS)
FROM_FLOAT(iq3_s, EMBER_IQ3_S)
FROM_FLOAT(iq1_s, EMBER_IQ1_S)
FROM_FLOAT(iq1_m, EMBER_IQ1_M)
#undef FROM_FLOAT
