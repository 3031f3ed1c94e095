"""Lesson (filled in below)."""

import streamlit as st

st.title("Lesson")
