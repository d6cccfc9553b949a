package contract

// iso3166Alpha2 lists the officially assigned ISO 3166-1 alpha-2 codes (249).
// Reserved and withdrawn codes (UK, EU, XK, YU, AN, ...) are left out: an
// ERP writing UK for the United Kingdom is a data error the quarantine should
// show, not a country the dashboards should invent.
const iso3166Alpha2 = "" +
	"AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ " +
	"BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
	"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ " +
	"DE DJ DK DM DO DZ " +
	"EC EE EG EH ER ES ET " +
	"FI FJ FK FM FO FR " +
	"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY " +
	"HK HM HN HR HT HU " +
	"ID IE IL IM IN IO IQ IR IS IT " +
	"JE JM JO JP " +
	"KE KG KH KI KM KN KP KR KW KY KZ " +
	"LA LB LC LI LK LR LS LT LU LV LY " +
	"MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ " +
	"NA NC NE NF NG NI NL NO NP NR NU NZ " +
	"OM " +
	"PA PE PF PG PH PK PL PM PN PR PS PT PW PY " +
	"QA " +
	"RE RO RS RU RW " +
	"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ " +
	"TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ " +
	"UA UG UM US UY UZ " +
	"VA VC VE VG VI VN VU " +
	"WF WS " +
	"YE YT " +
	"ZA ZM ZW"

// countries indexes the codes by their two letters, so that a lookup on the
// hot path is an array access returning an interned string: the country of
// a million rows costs no allocation.
var countries = func() (t [26 * 26]string) {
	for i := 0; i+2 <= len(iso3166Alpha2); i += 3 {
		c := iso3166Alpha2[i : i+2]
		t[int(c[0]-'A')*26+int(c[1]-'A')] = c
	}
	return t
}()

// country returns the interned code for b, or "" when b is not an assigned
// upper-case alpha-2 code.
func country(b []byte) string {
	if len(b) != 2 || b[0] < 'A' || b[0] > 'Z' || b[1] < 'A' || b[1] > 'Z' {
		return ""
	}
	return countries[int(b[0]-'A')*26+int(b[1]-'A')]
}

// IsCountry reports whether code is an assigned upper-case ISO 3166-1
// alpha-2 code. The real-time order path uses it too, so files and messages
// agree on what a country is.
func IsCountry(code string) bool { return country([]byte(code)) != "" }
