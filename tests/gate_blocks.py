"""Source blocks and claims the semantic stage's tests share."""

BLOCKS = [
    "The warranty covers manufacturing defects for two years from the date of purchase. "
    "Batteries are replaced free of charge during the first year. "
    "Accidental damage is not covered by the warranty.",
    "Refunds are issued within 30 days of a cancellation request. "
    "Annual plans can be refunded pro rata.",
    "Support is available by email on weekdays from 9:00 to 17:00 CET.",
]
PARAPHRASE = "Manufacturing faults are covered by the guarantee for two years after you buy [1]."
EXTRA_CLAIM = (
    "The warranty covers manufacturing defects for two years, and the company also offers "
    "free lifetime repairs at any store worldwide [1]."
)
