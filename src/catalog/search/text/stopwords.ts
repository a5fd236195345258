// English and Spanish stopwords: function words that say nothing about which tool is wanted.
// Kept short on purpose: a word that might name a capability ("new", "all", "list", "no") stays
// out of this list, because dropping it would hide a real intent. The first halves of the
// contractions the tokeniser splits ("don't" → don + t) are function words too.

const ENGLISH = `a about above after again against am an and any are as at be been before being below between
both but by can could did do does doing down during each few for from further had has have having he her
here hers him his how i if in into is it its itself just me more most my myself of off on once only or other
our ours out over own please same she should so some such than that the their theirs them then there these
they this those through to too under until up very was we were what when where which while who whom why will
with would you your yours want wants need needs using use via also etc let like
help tell give provide kindly thanks thank able sure
one
don doesn didn isn aren wasn weren won wouldn shouldn couldn hasn haven`;

const SPANISH = `a al algo como con cual cuando de del desde donde el ella ellos en entre era es esa ese esta estas
este esto estos estoy fue ha hay la las le les lo los me mi mis muy necesito nos o para pero por porque que
quiero se sea ser si sin sobre su sus tambien te tiene tu un una unas uno unos y ya yo`;

export const STOPWORDS: ReadonlySet<string> = new Set(
  `${ENGLISH} ${SPANISH}`.split(/\s+/u).filter((w) => w.length > 0),
);

export function isStopword(token: string): boolean {
  return STOPWORDS.has(token);
}
