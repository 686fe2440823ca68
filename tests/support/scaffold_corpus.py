"""Honest solutions that share a scaffold's boilerplate: sixteen scripts written the way an
AIDE-style agent writes them (load the CSVs, prepare features, hold out a validation
split, fit one model, print the metric, write submission.csv), each for a different
competition, with its own features and model. None copies another; yet, since Dolos
compares the shape of the syntax tree and not names or literals, their common skeleton
makes many pairs look alike. The material of the shared-code filter's tests."""

from __future__ import annotations

SOLUTIONS: dict[str, str] = {}

# What a scaffold writes first: a short script on its usual skeleton, its own columns,
# preparation, model and metric.

SOLUTIONS["playground-s3e9.py"] = """\
import pandas as pd
import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.metrics import mean_squared_error

# Load the data
train_data = pd.read_csv("./input/train.csv")
test_data = pd.read_csv("./input/test.csv")

# Prepare the data
X = train_data.drop(["id", "Strength"], axis=1)
y = train_data["Strength"]
X_test = test_data.drop("id", axis=1)

# Split the data into training and validation sets
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.2, random_state=42)

# Train the model
model = GradientBoostingRegressor(n_estimators=300, max_depth=4, random_state=42)
model.fit(X_train, y_train)

# Evaluate the model
rmse = np.sqrt(mean_squared_error(y_val, model.predict(X_val)))
print(f"Validation RMSE: {rmse}")

# Save the predictions
submission = pd.DataFrame({"id": test_data["id"], "Strength": model.predict(X_test)})
submission.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["spaceship-titanic.py"] = """\
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import accuracy_score

# Load the data
train_data = pd.read_csv("./input/train.csv")
test_data = pd.read_csv("./input/test.csv")

# Spending columns and one-hot planets
spend = ["RoomService", "FoodCourt", "ShoppingMall", "Spa", "VRDeck"]
for frame in (train_data, test_data):
    frame[spend] = frame[spend].fillna(0)
    frame["CryoSleep"] = frame["CryoSleep"].fillna(False).astype(int)
X = pd.get_dummies(train_data[spend + ["CryoSleep", "HomePlanet"]])
y = train_data["Transported"]
X_test = pd.get_dummies(test_data[spend + ["CryoSleep", "HomePlanet"]])

# Split the data
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.2, random_state=0)

# Train a random forest
model = RandomForestClassifier(n_estimators=200, max_depth=8, random_state=0)
model.fit(X_train, y_train)

# Evaluate
print(f"Validation accuracy: {accuracy_score(y_val, model.predict(X_val))}")

# Write the submission
submission = pd.DataFrame({"PassengerId": test_data["PassengerId"], "Transported": model.predict(X_test)})
submission.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["tabular-jan-2021.py"] = """\
import pandas as pd
from sklearn.model_selection import train_test_split
from lightgbm import LGBMRegressor
from sklearn.metrics import mean_squared_error

# Load the data
train = pd.read_csv("./input/train.csv")
test = pd.read_csv("./input/test.csv")

# Features and target
X = train.drop(["id", "target"], axis=1)
y = train["target"]

# Hold out 20% for validation
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.2, random_state=7)

# Fit LightGBM
model = LGBMRegressor(n_estimators=1000, learning_rate=0.02, num_leaves=64)
model.fit(X_train, y_train)

# Validation score
score = mean_squared_error(y_val, model.predict(X_val), squared=False)
print(f"Validation RMSE: {score}")

# Predict the test set and save
predictions = model.predict(test.drop("id", axis=1))
submission = pd.DataFrame({"id": test["id"], "target": predictions})
submission.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["playground-s3e5.py"] = """\
import pandas as pd
from sklearn.model_selection import train_test_split
from xgboost import XGBClassifier
from sklearn.metrics import cohen_kappa_score

# Load the data
train_df = pd.read_csv("./input/train.csv")
test_df = pd.read_csv("./input/test.csv")

# Wine quality labels start at 3: shift them for XGBoost
X = train_df.drop(["Id", "quality"], axis=1)
y = train_df["quality"] - 3
X_test = test_df.drop("Id", axis=1)

# Split
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.25, stratify=y, random_state=1)

# Model
model = XGBClassifier(n_estimators=250, max_depth=3, learning_rate=0.05)
model.fit(X_train, y_train)

# Quadratic weighted kappa on the validation set
kappa = cohen_kappa_score(y_val, model.predict(X_val), weights="quadratic")
print(f"Validation QWK: {kappa:.4f}")

# Submission
submission = pd.DataFrame({"Id": test_df["Id"], "quality": model.predict(X_test) + 3})
submission.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["playground-s3e11.py"] = """\
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.metrics import mean_squared_log_error

# Load the data
train = pd.read_csv("./input/train.csv")
test = pd.read_csv("./input/test.csv")

# The target is a cost: learn its logarithm
X = train.drop(["id", "cost"], axis=1)
y = np.log1p(train["cost"])
X_test = test.drop(["id"], axis=1)

# Split the data into training and validation sets
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.2, random_state=42)

# Initialize and train the model
model = HistGradientBoostingRegressor(max_iter=500, learning_rate=0.05)
model.fit(X_train, y_train)

# Evaluate the model
rmsle = np.sqrt(mean_squared_log_error(np.expm1(y_val), np.expm1(model.predict(X_val))))
print(f"Validation RMSLE: {rmsle}")

# Save the predictions to a CSV file
submission = pd.DataFrame({"id": test["id"], "cost": np.expm1(model.predict(X_test))})
submission.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["tabular-aug-2022.py"] = """\
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.impute import SimpleImputer

# Load the data
train_data = pd.read_csv("./input/train.csv")
test_data = pd.read_csv("./input/test.csv")

# Numeric measurements only, missing values filled with the median
features = [c for c in train_data.columns if c.startswith("measurement")] + ["loading"]
imputer = SimpleImputer(strategy="median")
X = imputer.fit_transform(train_data[features])
y = train_data["failure"]
X_test = imputer.transform(test_data[features])

# Split the data into training and validation sets
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.2, random_state=0)

# Train the model
model = LogisticRegression(max_iter=1000, C=0.5)
model.fit(X_train, y_train)

# Evaluate the model
print(f"Validation AUC: {roc_auc_score(y_val, model.predict_proba(X_val)[:, 1])}")

# Submission
submission = pd.DataFrame({"id": test_data["id"], "failure": model.predict_proba(X_test)[:, 1]})
submission.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["bike-sharing-demand.py"] = """\
import pandas as pd
import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import mean_squared_log_error

# Load the data
train = pd.read_csv("./input/train.csv", parse_dates=["datetime"])
test = pd.read_csv("./input/test.csv", parse_dates=["datetime"])

# Hour, weekday and year from the timestamp
for frame in (train, test):
    frame["hour"] = frame["datetime"].dt.hour
    frame["weekday"] = frame["datetime"].dt.weekday
    frame["year"] = frame["datetime"].dt.year
columns = ["season", "holiday", "workingday", "weather", "temp", "humidity", "hour", "weekday", "year"]
X = train[columns]
y = np.log1p(train["count"])

# Split the data
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.2, random_state=1)

# Train the model
model = RandomForestRegressor(n_estimators=300, n_jobs=-1, random_state=1)
model.fit(X_train, y_train)

# Evaluate
rmsle = np.sqrt(mean_squared_log_error(np.expm1(y_val), np.expm1(model.predict(X_val))))
print(f"RMSLE: {rmsle:.4f}")

# Save the submission
submission = pd.DataFrame({"datetime": test["datetime"], "count": np.expm1(model.predict(test[columns]))})
submission.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["cat-in-the-dat.py"] = """\
import pandas as pd
from catboost import CatBoostClassifier
from sklearn.model_selection import train_test_split
from sklearn.metrics import roc_auc_score

# Load the data
train_data = pd.read_csv("./input/train.csv")
test_data = pd.read_csv("./input/test.csv")

# Separate features and target; every column is a category
X = train_data.drop(["id", "target"], axis=1).astype(str)
y = train_data["target"]
X_test = test_data.drop(["id"], axis=1).astype(str)

# Split the data into training and validation sets
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.2, random_state=42)

# Train CatBoost on the categorical columns
model = CatBoostClassifier(iterations=800, learning_rate=0.08, depth=6, verbose=False)
model.fit(X_train, y_train, cat_features=list(X.columns))

# Evaluate the model
print(f"Validation AUC: {roc_auc_score(y_val, model.predict_proba(X_val)[:, 1])}")

# Save the predictions
submission = pd.DataFrame({"id": test_data["id"], "target": model.predict_proba(X_test)[:, 1]})
submission.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["mobile-price.py"] = """\
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.metrics import accuracy_score

# Load the data
train_df = pd.read_csv("./input/train.csv")
test_df = pd.read_csv("./input/test.csv")

# Scale the features
scaler = StandardScaler()
X = scaler.fit_transform(train_df.drop(["price_range"], axis=1))
y = train_df["price_range"]
X_test = scaler.transform(test_df.drop(["id"], axis=1))

# Validation split
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.2, random_state=3)

# A nearest-neighbours classifier
model = KNeighborsClassifier(n_neighbors=15, weights="distance")
model.fit(X_train, y_train)

# Accuracy
print("Validation accuracy:", accuracy_score(y_val, model.predict(X_val)))

# Submission
submission = pd.DataFrame({"id": test_df["id"], "price_range": model.predict(X_test)})
submission.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["insurance-cross-sell.py"] = """\
import pandas as pd
from sklearn.model_selection import train_test_split
from lightgbm import LGBMClassifier
from sklearn.metrics import roc_auc_score

# Load the data
train = pd.read_csv("./input/train.csv")
test = pd.read_csv("./input/test.csv")

# Encode the three text columns as categories
for column in ["Gender", "Vehicle_Age", "Vehicle_Damage"]:
    train[column] = train[column].astype("category")
    test[column] = test[column].astype("category")
X = train.drop(["id", "Response"], axis=1)
y = train["Response"]
X_test = test.drop(["id"], axis=1)

# Split the data
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.1, stratify=y, random_state=5)

# Train
model = LGBMClassifier(n_estimators=600, learning_rate=0.05, scale_pos_weight=3)
model.fit(X_train, y_train)

# Evaluate
print(f"Validation ROC AUC: {roc_auc_score(y_val, model.predict_proba(X_val)[:, 1]):.4f}")

# Submit
submission = pd.DataFrame({"id": test["id"], "Response": model.predict_proba(X_test)[:, 1]})
submission.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["abalone-age.py"] = """\
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import Ridge
from sklearn.metrics import mean_squared_log_error

# Load the data
train = pd.read_csv("./input/train.csv")
test = pd.read_csv("./input/test.csv")

# One-hot encode the sex column
X = pd.get_dummies(train.drop(["id", "Rings"], axis=1), columns=["Sex"])
y = np.log1p(train["Rings"])
X_test = pd.get_dummies(test.drop(["id"], axis=1), columns=["Sex"])

# Split the data into training and validation sets
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.2, random_state=11)

# Fit a ridge regression on the log of the rings
model = Ridge(alpha=1.0)
model.fit(X_train, y_train)

# Evaluate
rmsle = np.sqrt(mean_squared_log_error(np.expm1(y_val), np.expm1(model.predict(X_val))))
print(f"Validation RMSLE: {rmsle:.5f}")

# Save the submission
submission = pd.DataFrame({"id": test["id"], "Rings": np.expm1(model.predict(X_test))})
submission.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["steel-plate-faults.py"] = """\
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.metrics import roc_auc_score

# Load the data
train_data = pd.read_csv("./input/train.csv")
test_data = pd.read_csv("./input/test.csv")

# Seven binary targets, one model each
targets = ["Pastry", "Z_Scratch", "K_Scatch", "Stains", "Dirtiness", "Bumps", "Other_Faults"]
X = train_data.drop(["id"] + targets, axis=1)
X_test = test_data.drop(["id"], axis=1)
submission = pd.DataFrame({"id": test_data["id"]})

for target in targets:
    X_train, X_val, y_train, y_val = train_test_split(X, train_data[target], test_size=0.2, random_state=8)
    model = ExtraTreesClassifier(n_estimators=300, min_samples_leaf=3, n_jobs=-1)
    model.fit(X_train, y_train)
    print(target, "AUC:", roc_auc_score(y_val, model.predict_proba(X_val)[:, 1]))
    submission[target] = model.predict_proba(X_test)[:, 1]

# Save
submission.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["house-prices.py"] = """\
import numpy as np
import pandas as pd
from sklearn.linear_model import RidgeCV
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

train = pd.read_csv("./input/train.csv")
test = pd.read_csv("./input/test.csv")

target = np.log1p(train.pop("SalePrice"))
full = pd.concat([train, test], keys=["train", "test"])
full["TotalSF"] = full["TotalBsmtSF"].fillna(0) + full["1stFlrSF"] + full["2ndFlrSF"]
full["Age"] = full["YrSold"] - full["YearBuilt"]
numeric = full.select_dtypes(include="number").columns.drop("Id")
skewed = [c for c in numeric if full[c].skew() > 0.75]
full[skewed] = np.log1p(full[skewed].clip(lower=0))
full = pd.get_dummies(full.drop("Id", axis=1), dummy_na=True).fillna(0)

X, X_test = full.loc["train"], full.loc["test"]
pipeline = make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-2, 3, 30)))
folds = KFold(n_splits=5, shuffle=True, random_state=0)
oof = cross_val_predict(pipeline, X, target, cv=folds)
print("CV RMSE of log price:", mean_squared_error(target, oof) ** 0.5)

pipeline.fit(X, target)
predictions = np.expm1(pipeline.predict(X_test))
pd.DataFrame({"Id": test["Id"], "SalePrice": predictions}).to_csv(
    "./submission/submission.csv", index=False
)
"""

SOLUTIONS["digit-recognizer.py"] = """\
import numpy as np
import pandas as pd
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

# Load the data
train = pd.read_csv("./input/train.csv")
test = pd.read_csv("./input/test.csv")

labels = train["label"].values
pixels = train.drop("label", axis=1).values / 255.0
test_pixels = test.values / 255.0

# Reduce the dimension before the kernel machine
pca = PCA(n_components=60, whiten=True, random_state=0).fit(pixels)
features = pca.transform(pixels)
test_features = pca.transform(test_pixels)

X_train, X_val, y_train, y_val = train_test_split(
    features, labels, test_size=0.1, stratify=labels, random_state=0
)
classifier = SVC(C=8.0, gamma="scale", kernel="rbf")
classifier.fit(X_train, y_train)
print("Validation accuracy:", (classifier.predict(X_val) == y_val).mean())

classifier.fit(features, labels)
result = pd.DataFrame(
    {"ImageId": np.arange(1, len(test) + 1), "Label": classifier.predict(test_features)}
)
result.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["jigsaw-toxic-comment.py"] = """\
import pandas as pd
from scipy.sparse import hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

LABELS = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]

train = pd.read_csv("./input/train.csv")
test = pd.read_csv("./input/test.csv")

words = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=3, max_features=200000)
chars = TfidfVectorizer(sublinear_tf=True, analyzer="char_wb", ngram_range=(2, 5), min_df=5)
texts = pd.concat([train["comment_text"], test["comment_text"]])
words.fit(texts)
chars.fit(texts)
X = hstack([words.transform(train["comment_text"]), chars.transform(train["comment_text"])])
X_test = hstack([words.transform(test["comment_text"]), chars.transform(test["comment_text"])])
X = X.tocsr()

submission = pd.DataFrame({"id": test["id"]})
scores = []
for label in LABELS:
    X_train, X_val, y_train, y_val = train_test_split(
        X, train[label], test_size=0.15, random_state=7
    )
    clf = LogisticRegression(C=4.0, solver="saga", max_iter=300)
    clf.fit(X_train, y_train)
    scores.append(roc_auc_score(y_val, clf.predict_proba(X_val)[:, 1]))
    clf.fit(X, train[label])
    submission[label] = clf.predict_proba(X_test)[:, 1]
print("Mean column-wise AUC:", sum(scores) / len(scores))
submission.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["forest-cover-type.py"] = """\
import pandas as pd
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.model_selection import cross_val_score

train = pd.read_csv("./input/train.csv")
test = pd.read_csv("./input/test.csv")


def engineer(frame):
    frame = frame.copy()
    frame["hydro_distance"] = (
        frame["Horizontal_Distance_To_Hydrology"] ** 2
        + frame["Vertical_Distance_To_Hydrology"] ** 2
    ) ** 0.5
    frame["elevation_minus_vertical"] = (
        frame["Elevation"] - frame["Vertical_Distance_To_Hydrology"]
    )
    frame["fire_plus_road"] = (
        frame["Horizontal_Distance_To_Fire_Points"] + frame["Horizontal_Distance_To_Roadways"]
    )
    return frame.drop("Id", axis=1)


features = engineer(train.drop("Cover_Type", axis=1))
trees = ExtraTreesClassifier(n_estimators=500, max_features=0.5, n_jobs=-1, random_state=3)
accuracy = cross_val_score(trees, features, train["Cover_Type"], cv=4, scoring="accuracy")
print("Cross-validated accuracy: %.4f" % accuracy.mean())
trees.fit(features, train["Cover_Type"])
pd.DataFrame({"Id": test["Id"], "Cover_Type": trees.predict(engineer(test))}).to_csv(
    "./submission/submission.csv", index=False
)
"""

SOLUTIONS["leaf-classification.py"] = """\
import pandas as pd
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import LabelEncoder, StandardScaler

train = pd.read_csv("./input/train.csv")
test = pd.read_csv("./input/test.csv")

encoder = LabelEncoder().fit(train["species"])
labels = encoder.transform(train["species"])
X = train.drop(["id", "species"], axis=1).values

pipe = Pipeline(
    [
        ("scale", StandardScaler()),
        ("lda", LinearDiscriminantAnalysis(n_components=60)),
        ("knn", KNeighborsClassifier(n_neighbors=4, weights="distance")),
    ]
)
splitter = StratifiedShuffleSplit(n_splits=1, test_size=0.2, random_state=23)
for fit_rows, check_rows in splitter.split(X, labels):
    pipe.fit(X[fit_rows], labels[fit_rows])
    print("log loss:", log_loss(labels[check_rows], pipe.predict_proba(X[check_rows])))

pipe.fit(X, labels)
probabilities = pipe.predict_proba(test.drop("id", axis=1).values)
answer = pd.DataFrame(probabilities, columns=encoder.classes_)
answer.insert(0, "id", test["id"])
answer.to_csv("./submission/submission.csv", index=False)
"""

SOLUTIONS["ventilator-pressure.py"] = """\
import pandas as pd
import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.metrics import mean_absolute_error
from sklearn.model_selection import GroupShuffleSplit

# Load the data
train = pd.read_csv("./input/train.csv")
test = pd.read_csv("./input/test.csv")


def breath_features(df):
    df = df.copy()
    grouped = df.groupby("breath_id")
    df["u_in_cumsum"] = grouped["u_in"].cumsum()
    df["u_in_lag1"] = grouped["u_in"].shift(1).fillna(0)
    df["u_in_diff"] = df["u_in"] - df["u_in_lag1"]
    df["time_step_diff"] = grouped["time_step"].diff().fillna(0)
    df["R_C"] = df["R"] * 100 + df["C"]
    return df


train = breath_features(train)
test = breath_features(test)
columns = [c for c in train.columns if c not in ("id", "breath_id", "pressure")]

split = GroupShuffleSplit(n_splits=1, test_size=0.2, random_state=9)
fit_idx, val_idx = next(split.split(train, groups=train["breath_id"]))
regressor = HistGradientBoostingRegressor(max_iter=800, learning_rate=0.1, max_leaf_nodes=63)
regressor.fit(train.iloc[fit_idx][columns], train.iloc[fit_idx]["pressure"])
inspiratory = train.iloc[val_idx]["u_out"] == 0
error = mean_absolute_error(
    train.iloc[val_idx]["pressure"][inspiratory],
    regressor.predict(train.iloc[val_idx][columns])[inspiratory.values],
)
print("MAE on the inspiratory phase:", error)
test["pressure"] = regressor.predict(test[columns])
test[["id", "pressure"]].to_csv("./submission/submission.csv", index=False)
"""


# The part of the scaffold every solution starts from, as an operator would enter it as
# the scaffold's template code (Dolos' ignored file).
TEMPLATE = """\
import pandas as pd
import numpy as np
from sklearn.model_selection import train_test_split

# Load the data
train = pd.read_csv("./input/train.csv")
test = pd.read_csv("./input/test.csv")

X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.2, random_state=42)

submission = pd.DataFrame({"id": test["id"], "target": predictions})
submission.to_csv("./submission/submission.csv", index=False)
"""
