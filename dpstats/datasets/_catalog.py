"""What each bundled data set is: source, size, label, licence, and its declared categories.

The category levels below are *public* code lists (the data sets' own documentation), declared
here so that formulas treat the columns as categorical without reading levels from the data.
``data/build_datasets.py`` checks that every value in the shipped files is one of these levels.
"""

from __future__ import annotations

# Diamond grades, worst to best (ggplot2's ordering).
CUT = ("Fair", "Good", "Very Good", "Premium", "Ideal")
COLOR = ("J", "I", "H", "G", "F", "E", "D")
CLARITY = ("I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF")

# UCI Adult code lists (adult.names), in the order listed there; education by years of schooling.
WORKCLASS = ("Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
             "State-gov", "Without-pay", "Never-worked")
EDUCATION = ("Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th",
             "HS-grad", "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters",
             "Prof-school", "Doctorate")
MARITAL = ("Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
           "Married-spouse-absent", "Married-AF-spouse")
OCCUPATION = ("Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
              "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
              "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
              "Armed-Forces")
RELATIONSHIP = ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried")
RACE = ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black")
SEX = ("Female", "Male")
COUNTRY = ("United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
           "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba",
           "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico",
           "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan",
           "Haiti", "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand",
           "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands")
INCOME = ("<=50K", ">50K")

#: name -> description. ``categories`` maps a column to ``(levels, ordered)``.
CATALOG: dict[str, dict] = {
    "california": {
        "title": "California housing (1990 census block groups)",
        "label": "median_house_value", "rows": 20433, "columns": 9,
        "formula": "median_house_value ~ .",
        "source": "StatLib (Pace & Barry 1997, 'Sparse spatial autoregressions'); CSV copy in "
                  "ageron/handson-ml2",
        "licence": "public StatLib data; the CSV copy is from an Apache-2.0 repository",
        "notes": "rows with missing values and the text column ocean_proximity dropped "
                 "(as in Amin et al. 2023)",
        "categories": {},
    },
    "diamonds": {
        "title": "Diamonds: price and attributes of 53,940 round-cut diamonds",
        "label": "price", "rows": 53940, "columns": 10, "formula": "price ~ .",
        "source": "the diamonds data of the ggplot2 R package (Wickham); CSV copy in "
                  "akmand/datasets",
        "licence": "MIT (ggplot2)",
        "notes": "cut, color and clarity are ordered categoricals with their declared grades "
                 "(cut Fair < Good < Very Good < Premium < Ideal; color J < ... < D; clarity "
                 "I1 < SI2 < SI1 < VS2 < VS1 < VVS2 < VVS1 < IF). Amin et al. 2023 coded them "
                 "as integers instead.",
        "categories": {"cut": (CUT, True), "color": (COLOR, True),
                       "clarity": (CLARITY, True)},
    },
    "nyc_garbage": {
        "title": "NYC Department of Sanitation monthly tonnage by community district",
        "label": "REFUSETONSCOLLECTED", "rows": 18810, "columns": 8,
        "formula": "REFUSETONSCOLLECTED ~ .",
        "source": "NYC Open Data, DSNY Monthly Tonnage (dataset ebb7-mvp5)",
        "licence": "NYC Open Data terms of use (public data, free to reuse)",
        "notes": "months up to 2022/07; paper and metal/glass/plastic tons and a one-hot "
                 "BOROUGH (all five indicators, as in Amin et al. 2023)",
        "categories": {},
    },
    "nba": {
        "title": "NBA games 2003-2021: home-team box-score shares and points",
        "label": "PTS_home", "rows": 24925, "columns": 6, "formula": "PTS_home ~ .",
        "source": "Kaggle 'NBA games data' (Nathan Lauga, games.csv; statistics from "
                  "stats.nba.com)",
        "licence": "as published on the Kaggle page (no licence file ships with the copy "
                   "used here); cite the Kaggle data set",
        "notes": "the five features used by Amin et al. 2023; rows with missing values "
                 "dropped. Their snapshot had 21,613 rows.",
        "categories": {},
    },
    "adult": {
        "title": "UCI Adult (census income): does a person earn more than $50K a year?",
        "label": "income", "rows": 48842, "columns": 15,
        "formula": "income ~ . - fnlwgt - education - native_country",
        "source": "UCI Machine Learning Repository, Adult (Becker & Kohavi 1996), "
                  "adult.data + adult.test",
        "licence": "CC BY 4.0",
        "notes": "'?' read as missing (about 7% of rows have one). Text columns are "
                 "categoricals with the levels of adult.names; income has levels "
                 "('<=50K', '>50K'), so dp_glm codes '>50K' as 1. education is ordered by "
                 "years of schooling (and duplicates education_num). Rows 0-32,560 are the UCI "
                 "training file, the rest its test file.",
        "categories": {"workclass": (WORKCLASS, False), "education": (EDUCATION, True),
                       "marital_status": (MARITAL, False), "occupation": (OCCUPATION, False),
                       "relationship": (RELATIONSHIP, False), "race": (RACE, False),
                       "sex": (SEX, False), "native_country": (COUNTRY, False),
                       "income": (INCOME, False)},
    },
    "alon": {
        "title": "Alon colon cancer microarray: 2,000 genes, 62 tissues",
        "label": "y", "rows": 62, "columns": 2001, "formula": "y ~ .",
        "source": "Alon et al. 1999 (PNAS 96:6745), via the R package datamicroarray",
        "licence": "MIT (datamicroarray)",
        "notes": "y = +1 for tumour (40) and -1 for normal tissue (22), the coding of Swope et "
                 "al. 2024; X1..X2000 are raw expression levels. With n = 62 and p = 2,000 it "
                 "is a feature-selection data set (DP-SIS, SubLasso), far too small for a "
                 "private regression. Chosen as the smallest two-class microarray set with "
                 "thousands of genes (345 KB gzipped).",
        "categories": {},
    },
}
