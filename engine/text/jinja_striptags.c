/* The striptags filter: markupsafe's Markup.striptags(), which jinja2
 * calls on str(value).  It drops <!-- comments --> and then <tags>, joins
 * the words with single spaces (str.split(): any Unicode space), and
 * unescapes HTML character references as Python's html.unescape does.
 *
 * Of html.unescape's 2231 entity names this knows the HTML 4 ones, &apos;
 * and the upper-case legacy ones (&AMP), with and without the ';' where
 * HTML5 allows that: the others are left as they are written. */
#include "config.h"

#include "jinja_impl.h"

#include <string.h>

/* Python's html.entities.html5 for the names of HTML 4 (name2codepoint),
   &apos; and &AMP &LT &GT &QUOT &COPY &REG, sorted */
static const struct {
    const char *name, *text;
} entities[] = {
    {"AElig", "\xc3\x86"}, {"AElig;", "\xc3\x86"}, {"AMP", "&"}, {"AMP;", "&"}, {"Aacute", "\xc3\x81"},
    {"Aacute;", "\xc3\x81"}, {"Acirc", "\xc3\x82"}, {"Acirc;", "\xc3\x82"}, {"Agrave", "\xc3\x80"},
    {"Agrave;", "\xc3\x80"}, {"Alpha;", "\xce\x91"}, {"Aring", "\xc3\x85"}, {"Aring;", "\xc3\x85"},
    {"Atilde", "\xc3\x83"}, {"Atilde;", "\xc3\x83"}, {"Auml", "\xc3\x84"}, {"Auml;", "\xc3\x84"},
    {"Beta;", "\xce\x92"}, {"COPY", "\xc2\xa9"}, {"COPY;", "\xc2\xa9"}, {"Ccedil", "\xc3\x87"},
    {"Ccedil;", "\xc3\x87"}, {"Chi;", "\xce\xa7"}, {"Dagger;", "\xe2\x80\xa1"}, {"Delta;", "\xce\x94"},
    {"ETH", "\xc3\x90"}, {"ETH;", "\xc3\x90"}, {"Eacute", "\xc3\x89"}, {"Eacute;", "\xc3\x89"},
    {"Ecirc", "\xc3\x8a"}, {"Ecirc;", "\xc3\x8a"}, {"Egrave", "\xc3\x88"}, {"Egrave;", "\xc3\x88"},
    {"Epsilon;", "\xce\x95"}, {"Eta;", "\xce\x97"}, {"Euml", "\xc3\x8b"}, {"Euml;", "\xc3\x8b"}, {"GT", ">"},
    {"GT;", ">"}, {"Gamma;", "\xce\x93"}, {"Iacute", "\xc3\x8d"}, {"Iacute;", "\xc3\x8d"},
    {"Icirc", "\xc3\x8e"}, {"Icirc;", "\xc3\x8e"}, {"Igrave", "\xc3\x8c"}, {"Igrave;", "\xc3\x8c"},
    {"Iota;", "\xce\x99"}, {"Iuml", "\xc3\x8f"}, {"Iuml;", "\xc3\x8f"}, {"Kappa;", "\xce\x9a"}, {"LT", "<"},
    {"LT;", "<"}, {"Lambda;", "\xce\x9b"}, {"Mu;", "\xce\x9c"}, {"Ntilde", "\xc3\x91"},
    {"Ntilde;", "\xc3\x91"}, {"Nu;", "\xce\x9d"}, {"OElig;", "\xc5\x92"}, {"Oacute", "\xc3\x93"},
    {"Oacute;", "\xc3\x93"}, {"Ocirc", "\xc3\x94"}, {"Ocirc;", "\xc3\x94"}, {"Ograve", "\xc3\x92"},
    {"Ograve;", "\xc3\x92"}, {"Omega;", "\xce\xa9"}, {"Omicron;", "\xce\x9f"}, {"Oslash", "\xc3\x98"},
    {"Oslash;", "\xc3\x98"}, {"Otilde", "\xc3\x95"}, {"Otilde;", "\xc3\x95"}, {"Ouml", "\xc3\x96"},
    {"Ouml;", "\xc3\x96"}, {"Phi;", "\xce\xa6"}, {"Pi;", "\xce\xa0"}, {"Prime;", "\xe2\x80\xb3"},
    {"Psi;", "\xce\xa8"}, {"QUOT", "\x22"}, {"QUOT;", "\x22"}, {"REG", "\xc2\xae"}, {"REG;", "\xc2\xae"},
    {"Rho;", "\xce\xa1"}, {"Scaron;", "\xc5\xa0"}, {"Sigma;", "\xce\xa3"}, {"THORN", "\xc3\x9e"},
    {"THORN;", "\xc3\x9e"}, {"Tau;", "\xce\xa4"}, {"Theta;", "\xce\x98"}, {"Uacute", "\xc3\x9a"},
    {"Uacute;", "\xc3\x9a"}, {"Ucirc", "\xc3\x9b"}, {"Ucirc;", "\xc3\x9b"}, {"Ugrave", "\xc3\x99"},
    {"Ugrave;", "\xc3\x99"}, {"Upsilon;", "\xce\xa5"}, {"Uuml", "\xc3\x9c"}, {"Uuml;", "\xc3\x9c"},
    {"Xi;", "\xce\x9e"}, {"Yacute", "\xc3\x9d"}, {"Yacute;", "\xc3\x9d"}, {"Yuml;", "\xc5\xb8"},
    {"Zeta;", "\xce\x96"}, {"aacute", "\xc3\xa1"}, {"aacute;", "\xc3\xa1"}, {"acirc", "\xc3\xa2"},
    {"acirc;", "\xc3\xa2"}, {"acute", "\xc2\xb4"}, {"acute;", "\xc2\xb4"}, {"aelig", "\xc3\xa6"},
    {"aelig;", "\xc3\xa6"}, {"agrave", "\xc3\xa0"}, {"agrave;", "\xc3\xa0"}, {"alefsym;", "\xe2\x84\xb5"},
    {"alpha;", "\xce\xb1"}, {"amp", "&"}, {"amp;", "&"}, {"and;", "\xe2\x88\xa7"}, {"ang;", "\xe2\x88\xa0"},
    {"apos;", "'"}, {"aring", "\xc3\xa5"}, {"aring;", "\xc3\xa5"}, {"asymp;", "\xe2\x89\x88"},
    {"atilde", "\xc3\xa3"}, {"atilde;", "\xc3\xa3"}, {"auml", "\xc3\xa4"}, {"auml;", "\xc3\xa4"},
    {"bdquo;", "\xe2\x80\x9e"}, {"beta;", "\xce\xb2"}, {"brvbar", "\xc2\xa6"}, {"brvbar;", "\xc2\xa6"},
    {"bull;", "\xe2\x80\xa2"}, {"cap;", "\xe2\x88\xa9"}, {"ccedil", "\xc3\xa7"}, {"ccedil;", "\xc3\xa7"},
    {"cedil", "\xc2\xb8"}, {"cedil;", "\xc2\xb8"}, {"cent", "\xc2\xa2"}, {"cent;", "\xc2\xa2"},
    {"chi;", "\xcf\x87"}, {"circ;", "\xcb\x86"}, {"clubs;", "\xe2\x99\xa3"}, {"cong;", "\xe2\x89\x85"},
    {"copy", "\xc2\xa9"}, {"copy;", "\xc2\xa9"}, {"crarr;", "\xe2\x86\xb5"}, {"cup;", "\xe2\x88\xaa"},
    {"curren", "\xc2\xa4"}, {"curren;", "\xc2\xa4"}, {"dArr;", "\xe2\x87\x93"}, {"dagger;", "\xe2\x80\xa0"},
    {"darr;", "\xe2\x86\x93"}, {"deg", "\xc2\xb0"}, {"deg;", "\xc2\xb0"}, {"delta;", "\xce\xb4"},
    {"diams;", "\xe2\x99\xa6"}, {"divide", "\xc3\xb7"}, {"divide;", "\xc3\xb7"}, {"eacute", "\xc3\xa9"},
    {"eacute;", "\xc3\xa9"}, {"ecirc", "\xc3\xaa"}, {"ecirc;", "\xc3\xaa"}, {"egrave", "\xc3\xa8"},
    {"egrave;", "\xc3\xa8"}, {"empty;", "\xe2\x88\x85"}, {"emsp;", "\xe2\x80\x83"}, {"ensp;", "\xe2\x80\x82"},
    {"epsilon;", "\xce\xb5"}, {"equiv;", "\xe2\x89\xa1"}, {"eta;", "\xce\xb7"}, {"eth", "\xc3\xb0"},
    {"eth;", "\xc3\xb0"}, {"euml", "\xc3\xab"}, {"euml;", "\xc3\xab"}, {"euro;", "\xe2\x82\xac"},
    {"exist;", "\xe2\x88\x83"}, {"fnof;", "\xc6\x92"}, {"forall;", "\xe2\x88\x80"}, {"frac12", "\xc2\xbd"},
    {"frac12;", "\xc2\xbd"}, {"frac14", "\xc2\xbc"}, {"frac14;", "\xc2\xbc"}, {"frac34", "\xc2\xbe"},
    {"frac34;", "\xc2\xbe"}, {"frasl;", "\xe2\x81\x84"}, {"gamma;", "\xce\xb3"}, {"ge;", "\xe2\x89\xa5"},
    {"gt", ">"}, {"gt;", ">"}, {"hArr;", "\xe2\x87\x94"}, {"harr;", "\xe2\x86\x94"},
    {"hearts;", "\xe2\x99\xa5"}, {"hellip;", "\xe2\x80\xa6"}, {"iacute", "\xc3\xad"}, {"iacute;", "\xc3\xad"},
    {"icirc", "\xc3\xae"}, {"icirc;", "\xc3\xae"}, {"iexcl", "\xc2\xa1"}, {"iexcl;", "\xc2\xa1"},
    {"igrave", "\xc3\xac"}, {"igrave;", "\xc3\xac"}, {"image;", "\xe2\x84\x91"}, {"infin;", "\xe2\x88\x9e"},
    {"int;", "\xe2\x88\xab"}, {"iota;", "\xce\xb9"}, {"iquest", "\xc2\xbf"}, {"iquest;", "\xc2\xbf"},
    {"isin;", "\xe2\x88\x88"}, {"iuml", "\xc3\xaf"}, {"iuml;", "\xc3\xaf"}, {"kappa;", "\xce\xba"},
    {"lArr;", "\xe2\x87\x90"}, {"lambda;", "\xce\xbb"}, {"lang;", "\xe2\x9f\xa8"}, {"laquo", "\xc2\xab"},
    {"laquo;", "\xc2\xab"}, {"larr;", "\xe2\x86\x90"}, {"lceil;", "\xe2\x8c\x88"}, {"ldquo;", "\xe2\x80\x9c"},
    {"le;", "\xe2\x89\xa4"}, {"lfloor;", "\xe2\x8c\x8a"}, {"lowast;", "\xe2\x88\x97"},
    {"loz;", "\xe2\x97\x8a"}, {"lrm;", "\xe2\x80\x8e"}, {"lsaquo;", "\xe2\x80\xb9"},
    {"lsquo;", "\xe2\x80\x98"}, {"lt", "<"}, {"lt;", "<"}, {"macr", "\xc2\xaf"}, {"macr;", "\xc2\xaf"},
    {"mdash;", "\xe2\x80\x94"}, {"micro", "\xc2\xb5"}, {"micro;", "\xc2\xb5"}, {"middot", "\xc2\xb7"},
    {"middot;", "\xc2\xb7"}, {"minus;", "\xe2\x88\x92"}, {"mu;", "\xce\xbc"}, {"nabla;", "\xe2\x88\x87"},
    {"nbsp", "\xc2\xa0"}, {"nbsp;", "\xc2\xa0"}, {"ndash;", "\xe2\x80\x93"}, {"ne;", "\xe2\x89\xa0"},
    {"ni;", "\xe2\x88\x8b"}, {"not", "\xc2\xac"}, {"not;", "\xc2\xac"}, {"notin;", "\xe2\x88\x89"},
    {"nsub;", "\xe2\x8a\x84"}, {"ntilde", "\xc3\xb1"}, {"ntilde;", "\xc3\xb1"}, {"nu;", "\xce\xbd"},
    {"oacute", "\xc3\xb3"}, {"oacute;", "\xc3\xb3"}, {"ocirc", "\xc3\xb4"}, {"ocirc;", "\xc3\xb4"},
    {"oelig;", "\xc5\x93"}, {"ograve", "\xc3\xb2"}, {"ograve;", "\xc3\xb2"}, {"oline;", "\xe2\x80\xbe"},
    {"omega;", "\xcf\x89"}, {"omicron;", "\xce\xbf"}, {"oplus;", "\xe2\x8a\x95"}, {"or;", "\xe2\x88\xa8"},
    {"ordf", "\xc2\xaa"}, {"ordf;", "\xc2\xaa"}, {"ordm", "\xc2\xba"}, {"ordm;", "\xc2\xba"},
    {"oslash", "\xc3\xb8"}, {"oslash;", "\xc3\xb8"}, {"otilde", "\xc3\xb5"}, {"otilde;", "\xc3\xb5"},
    {"otimes;", "\xe2\x8a\x97"}, {"ouml", "\xc3\xb6"}, {"ouml;", "\xc3\xb6"}, {"para", "\xc2\xb6"},
    {"para;", "\xc2\xb6"}, {"part;", "\xe2\x88\x82"}, {"permil;", "\xe2\x80\xb0"}, {"perp;", "\xe2\x8a\xa5"},
    {"phi;", "\xcf\x86"}, {"pi;", "\xcf\x80"}, {"piv;", "\xcf\x96"}, {"plusmn", "\xc2\xb1"},
    {"plusmn;", "\xc2\xb1"}, {"pound", "\xc2\xa3"}, {"pound;", "\xc2\xa3"}, {"prime;", "\xe2\x80\xb2"},
    {"prod;", "\xe2\x88\x8f"}, {"prop;", "\xe2\x88\x9d"}, {"psi;", "\xcf\x88"}, {"quot", "\x22"},
    {"quot;", "\x22"}, {"rArr;", "\xe2\x87\x92"}, {"radic;", "\xe2\x88\x9a"}, {"rang;", "\xe2\x9f\xa9"},
    {"raquo", "\xc2\xbb"}, {"raquo;", "\xc2\xbb"}, {"rarr;", "\xe2\x86\x92"}, {"rceil;", "\xe2\x8c\x89"},
    {"rdquo;", "\xe2\x80\x9d"}, {"real;", "\xe2\x84\x9c"}, {"reg", "\xc2\xae"}, {"reg;", "\xc2\xae"},
    {"rfloor;", "\xe2\x8c\x8b"}, {"rho;", "\xcf\x81"}, {"rlm;", "\xe2\x80\x8f"}, {"rsaquo;", "\xe2\x80\xba"},
    {"rsquo;", "\xe2\x80\x99"}, {"sbquo;", "\xe2\x80\x9a"}, {"scaron;", "\xc5\xa1"},
    {"sdot;", "\xe2\x8b\x85"}, {"sect", "\xc2\xa7"}, {"sect;", "\xc2\xa7"}, {"shy", "\xc2\xad"},
    {"shy;", "\xc2\xad"}, {"sigma;", "\xcf\x83"}, {"sigmaf;", "\xcf\x82"}, {"sim;", "\xe2\x88\xbc"},
    {"spades;", "\xe2\x99\xa0"}, {"sub;", "\xe2\x8a\x82"}, {"sube;", "\xe2\x8a\x86"},
    {"sum;", "\xe2\x88\x91"}, {"sup1", "\xc2\xb9"}, {"sup1;", "\xc2\xb9"}, {"sup2", "\xc2\xb2"},
    {"sup2;", "\xc2\xb2"}, {"sup3", "\xc2\xb3"}, {"sup3;", "\xc2\xb3"}, {"sup;", "\xe2\x8a\x83"},
    {"supe;", "\xe2\x8a\x87"}, {"szlig", "\xc3\x9f"}, {"szlig;", "\xc3\x9f"}, {"tau;", "\xcf\x84"},
    {"there4;", "\xe2\x88\xb4"}, {"theta;", "\xce\xb8"}, {"thetasym;", "\xcf\x91"},
    {"thinsp;", "\xe2\x80\x89"}, {"thorn", "\xc3\xbe"}, {"thorn;", "\xc3\xbe"}, {"tilde;", "\xcb\x9c"},
    {"times", "\xc3\x97"}, {"times;", "\xc3\x97"}, {"trade;", "\xe2\x84\xa2"}, {"uArr;", "\xe2\x87\x91"},
    {"uacute", "\xc3\xba"}, {"uacute;", "\xc3\xba"}, {"uarr;", "\xe2\x86\x91"}, {"ucirc", "\xc3\xbb"},
    {"ucirc;", "\xc3\xbb"}, {"ugrave", "\xc3\xb9"}, {"ugrave;", "\xc3\xb9"}, {"uml", "\xc2\xa8"},
    {"uml;", "\xc2\xa8"}, {"upsih;", "\xcf\x92"}, {"upsilon;", "\xcf\x85"}, {"uuml", "\xc3\xbc"},
    {"uuml;", "\xc3\xbc"}, {"weierp;", "\xe2\x84\x98"}, {"xi;", "\xce\xbe"}, {"yacute", "\xc3\xbd"},
    {"yacute;", "\xc3\xbd"}, {"yen", "\xc2\xa5"}, {"yen;", "\xc2\xa5"}, {"yuml", "\xc3\xbf"},
    {"yuml;", "\xc3\xbf"}, {"zeta;", "\xce\xb6"}, {"zwj;", "\xe2\x80\x8d"}, {"zwnj;", "\xe2\x80\x8c"},
};

static const char *entity(const char *name, size_t n)
{
    size_t lo = 0, hi = sizeof entities / sizeof entities[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int r = strncmp(entities[mid].name, name, n);
        if (!r && entities[mid].name[n]) r = 1;
        if (!r) return entities[mid].text;
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* html.unescape's numeric references: Windows-1252 for 0x80-0x9F, U+FFFD
   for 0, surrogates and beyond U+10FFFF, nothing for the code points HTML
   forbids */
static void numeric_ref(jx_sb *b, uint64_t num)
{
    static const uint16_t cp1252[32] = {
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152,
        0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122,
        0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    };
    if (num == 0 || (num >= 0xD800 && num <= 0xDFFF) || num > 0x10FFFF) {
        jx_sb_addcp(b, 0xFFFD);
        return;
    }
    if (num == 0x0D) {
        jx_sb_addc(b, '\r');
        return;
    }
    if (num >= 0x80 && num <= 0x9F) {
        jx_sb_addcp(b, cp1252[num - 0x80]);
        return;
    }
    if ((num >= 1 && num <= 8) || num == 0x0B || (num >= 0x0E && num <= 0x1F) || num == 0x7F ||
        (num >= 0xFDD0 && num <= 0xFDEF) || (num & 0xFFFE) == 0xFFFE)
        return;
    jx_sb_addcp(b, (uint32_t)num);
}

static bool hexdig(char ch) { return (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'f'); }

/* the reference at s[i] == '&': appended to b, *i moved past it */
static void char_ref(jx_ctx *c, jx_sb *b, const char *s, size_t n, size_t *i)
{
    size_t k = *i + 1;
    if (k < n && s[k] == '#') {
        bool hex = k + 1 < n && (s[k + 1] | 32) == 'x';
        size_t d = k + 1 + hex, e = d;
        uint64_t num = 0;
        while (e < n && (hex ? hexdig(s[e]) : (s[e] >= '0' && s[e] <= '9'))) {
            int v = s[e] <= '9' ? s[e] - '0' : (s[e] | 32) - 'a' + 10;
            if (num <= 0x10FFFF) num = num * (hex ? 16 : 10) + (uint64_t)v;
            e++;
        }
        if (e > d) {
            numeric_ref(b, num);
            *i = e < n && s[e] == ';' ? e + 1 : e;
            return;
        }
        jx_sb_addc(b, '&');                       /* &# without digits stays */
        *i += 1;
        return;
    }
    /* [^\t\n\f <&#;]{1,32};? then the whole name, or its longest known
       prefix of two characters or more */
    size_t e = k, cps = 0;
    while (e < n && cps < 32 && !strchr("\t\n\f <&#;", s[e])) {
        jx_utf8_next(s, n, &e);
        cps++;
    }
    if (!cps) {
        jx_sb_addc(b, '&');
        *i += 1;
        return;
    }
    if (e < n && s[e] == ';') e++;
    jx_step(c, 1);
    for (size_t end = e; end >= k + 2; end--) {
        const char *t = entity(s + k, end - k);
        if (t) {
            jx_sb_add(b, t, strlen(t));
            jx_sb_add(b, s + end, e - end);
            *i = e;
            return;
        }
    }
    jx_sb_add(b, s + *i, e - *i);
    *i = e;
}

/* Drops <!--.*?--> (comment) or <.*?> (re.DOTALL: across lines).  Once
   a search for the closing text fails from some point, every later one
   would too: remembering that keeps a text of many '<' linear. */
static const jx_str *strip_markup(jx_ctx *c, const jx_str *s, bool comment)
{
    const char *close = comment ? "-->" : ">";
    size_t cl = strlen(close), open = comment ? 4 : 1, none_from = SIZE_MAX;
    jx_sb b;
    jx_sb_init(&b, c->a);
    for (size_t i = 0; i < s->len;) {
        const char *e = NULL;
        if (s->s[i] == '<' && (!comment || (s->len - i >= 4 && !memcmp(s->s + i, "<!--", 4))) &&
            i + open < none_from) {
            e = memmem(s->s + i + open, s->len - i - open, close, cl);
            if (!e) none_from = i + open;
        }
        if (e) i = (size_t)(e - s->s) + cl;
        else jx_sb_addc(&b, s->s[i++]);
    }
    return jx_sb_str(&b);
}

jx_val jx_striptags(jx_ctx *c, const jx_str *s)
{
    jx_step(c, s->len >> 4);
    s = strip_markup(c, strip_markup(c, s, true), false);
    jx_sb w;                                      /* " ".join(s.split()) */
    jx_sb_init(&w, c->a);
    bool gap = false;
    for (size_t i = 0; i < s->len;) {
        size_t st = i;
        if (jx_is_space(jx_utf8_next(s->s, s->len, &i))) {
            gap = w.n > 0;
            continue;
        }
        if (gap) jx_sb_addc(&w, ' ');
        gap = false;
        jx_sb_add(&w, s->s + st, i - st);
    }
    jx_sb out;
    jx_sb_init(&out, c->a);
    for (size_t i = 0; i < w.n;) {
        if (w.p[i] == '&') char_ref(c, &out, w.p, w.n, &i);
        else jx_sb_addc(&out, w.p[i++]);
    }
    return jx_sb_val(&out);
}
